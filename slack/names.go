package slack

import (
	"context"
	"errors"
	"time"

	"github.com/slackbot/slackbot/slack/ratelimit"
)

// Names in a thread's history — each person's, and the <@U…> mentions in
// what they wrote — are looked up with users.info as the history is read,
// newest message first, so only the messages the model will see cost a
// call. A session asks Slack about at most maxNameLookups people, each
// call bounded by nameLookupTimeout, and stops asking after one call ran
// out of time: a thread naming hundreds of people, or a users.info that
// hangs, cannot hold the session's start. A name not looked up is shown
// as the person's id. Names found are remembered for a while (below).
const (
	maxNameLookups    = 20
	nameLookupTimeout = 3 * time.Second
)

// Names found are remembered for nameTTL, at most maxNames of them (the
// least recently used go first), so a renamed person is shown by their
// new name within the hour and the cache cannot grow without bound. A
// lookup that failed is never remembered.
const (
	nameTTL  = time.Hour
	maxNames = 10000
)

// nameBook resolves names for one session's history.
type nameBook struct {
	b      *Bot
	left   int  // lookups this session may still make
	gaveUp bool // a lookup ran out of time
}

// newNameBook starts a session's lookups.
func (b *Bot) newNameBook() *nameBook { return &nameBook{b: b, left: maxNameLookups} }

// name is user id's display name: known already, looked up while the
// session may, else the id.
func (n *nameBook) name(ctx context.Context, id string) string {
	b := n.b
	if name, ok := b.names.Get(id); ok {
		return name
	}
	if n.left <= 0 || n.gaveUp || ctx.Err() != nil {
		return id
	}
	n.left--
	lctx, cancel := context.WithTimeout(ratelimit.WithPriority(ctx, ratelimit.First), nameLookupTimeout)
	defer cancel()
	deadline, _ := lctx.Deadline()
	u, err := b.api.GetUserInfoContext(lctx, id)
	if err != nil {
		// The call on the wire is bounded by the same deadline and may be
		// told a moment before lctx is: either way it ran out of time.
		if errors.Is(err, context.DeadlineExceeded) || lctx.Err() != nil || !time.Now().Before(deadline) {
			n.gaveUp = true
		}
		return id
	}
	name := id
	switch {
	case u.Profile.DisplayName != "":
		name = u.Profile.DisplayName
	case u.RealName != "":
		name = u.RealName
	case u.Name != "":
		name = u.Name
	}
	b.names.Add(id, name)
	return name
}

// mentions writes the <@U…> mentions of text as @name.
func (n *nameBook) mentions(ctx context.Context, text string) string {
	return mentionRe.ReplaceAllStringFunc(text, func(m string) string {
		return "@" + n.name(ctx, m[2:len(m)-1])
	})
}
