package slack

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"go.uber.org/zap"
)

// Slack Connect: a shared channel brings people of other organisations to
// the bot, who must not get the company's tools and budgets. The bot
// answers the people of its own workspace, of its own Enterprise Grid
// organisation, and of the teams slack.allow.external_teams lists ("*":
// every one); a payload that does not tell the person's team is completed
// with users.info, and a person whose team cannot be told is refused.

// foreignRefusal is what a person of another organisation is told.
const foreignRefusal = "Sorry, I can only help people of this workspace's organisation."

// teamLookupTimeout bounds the users.info call that tells a person's team.
const teamLookupTimeout = 3 * time.Second

// teamTTL is how long a person's team, once looked up, is remembered.
const teamTTL = time.Hour

// maxTeams bounds the remembered teams; past it the least recently used
// go first.
const maxTeams = 10000

// member is a person's team and enterprise as users.info tells them.
type member struct{ team, enterprise string }

// teams remembers people's teams for teamTTL, at most maxTeams of them.
// A lookup that failed is never remembered.
type teams struct {
	lru *expirable.LRU[string, member]
}

func newTeams() teams { return teams{lru: expirable.NewLRU[string, member](maxTeams, nil, teamTTL)} }

func (t teams) get(user string) (member, bool) { return t.lru.Get(user) }

func (t teams) put(user string, m member) { t.lru.Add(user, m) }

// eventTeam is the team of an event's author as the event tells it:
// user_team, else user_profile.team, else team; "" when it tells none.
func eventTeam(ev slackevents.EventsAPIEvent) string {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.InnerEvent == nil {
		return ""
	}
	var inner struct {
		Team     string `json:"team"`
		UserTeam string `json:"user_team"`
		Profile  struct {
			Team string `json:"team"`
		} `json:"user_profile"`
	}
	if json.Unmarshal(*cb.InnerEvent, &inner) != nil {
		return ""
	}
	for _, t := range []string{inner.UserTeam, inner.Profile.Team, inner.Team} {
		if t != "" {
			return t
		}
	}
	return ""
}

// ownDecision tells from the ids a payload carries alone whether the
// person is one the bot answers; decided is false when only users.info
// can tell (no team, or another team while the bot is in an enterprise
// and the payload names none).
func (b *Bot) ownDecision(team, enterprise string) (ok, decided bool) {
	switch {
	case team == "":
		return false, false
	case team == b.teamID:
		return true, true
	case b.enterpriseID != "" && enterprise == b.enterpriseID:
		return true, true
	case b.externalAllowed(team) || enterprise != "" && b.externalAllowed(enterprise):
		return true, true
	case b.enterpriseID != "" && enterprise == "":
		return false, false
	}
	return false, true
}

// externalAllowed reports whether slack.allow.external_teams admits the
// team or enterprise id.
func (b *Bot) externalAllowed(id string) bool {
	return slices.Contains(b.cfg.Allow.ExternalTeams, "*") || slices.Contains(b.cfg.Allow.ExternalTeams, id)
}

// ownOrg reports whether the person user, whose payload told team and
// enterprise ("" where it did not), is one the bot answers. When the
// payload cannot tell, users.info is asked (bounded by
// teamLookupTimeout); when that cannot tell either, the person is
// refused.
func (b *Bot) ownOrg(ctx context.Context, user, team, enterprise string) bool {
	if ok, decided := b.ownDecision(team, enterprise); decided {
		return ok
	}
	m, known := b.teams.get(user)
	if !known {
		lctx, cancel := context.WithTimeout(ctx, teamLookupTimeout)
		u, err := b.api.GetUserInfoContext(lctx, user)
		cancel()
		if err != nil || u.TeamID == "" {
			b.log.Warn("the asker's team could not be told; refusing", zap.String("user", user), zap.Error(slackError(err)))
			return false
		}
		m = member{team: u.TeamID, enterprise: u.Enterprise.EnterpriseID}
		b.teams.put(user, m)
	}
	if team == "" {
		team = m.team
	}
	if enterprise == "" {
		enterprise = m.enterprise
	}
	ok, _ := b.ownDecision(team, enterprise)
	return ok
}

// refuseForeign tells a person of another organisation, and only them,
// that the bot does not answer them.
func (b *Bot) refuseForeign(ctx context.Context, channel, user string) {
	b.log.Info("request from another organisation refused", zap.String("channel", channel), zap.String("user", user))
	if err := b.ephemeral(ratelimit.WithPriority(ctx, ratelimit.Note), channel, user, "", foreignRefusal); err != nil {
		b.log.Debug("refusal not posted", zap.Error(slackError(err)))
	}
}

// clickFromOwnOrg calls handle with a click by a person the bot answers,
// and tells anyone else the bot does not answer them. It decides on the
// envelope loop when the payload tells, and off it when users.info must.
func (b *Bot) clickFromOwnOrg(ctx context.Context, cb slackapi.InteractionCallback, handle func(context.Context, slackapi.InteractionCallback)) {
	ok, decided := b.ownDecision(cb.User.TeamID, "")
	if decided && ok {
		handle(ctx, cb)
		return
	}
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("a click")
		if !decided && b.ownOrg(b.work, cb.User.ID, cb.User.TeamID, "") {
			handle(ctx, cb)
			return
		}
		b.refuseForeign(b.work, cb.Channel.ID, cb.User.ID)
	}()
}
