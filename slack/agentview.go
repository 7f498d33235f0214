package slack

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/ratelimit"
)

// The agent view. When a person opens a new conversation with the bot —
// the Messages tab of its DM (app_home_opened, the agent view's own
// event) or a new assistant thread (assistant_thread_started, the older
// assistant view) — the bot sets the suggested prompts of the agent that
// conversation routes to. Which channel the person is looking at
// (app_context_changed, assistant_thread_context_changed, and the context
// the other two carry) is remembered per person, and their next question
// in their DM with the bot gets one line naming that channel.
//
// Only ids are taken from these events. The line the model sees is
// written by the bot: the channel's name as Slack's channel directory or
// conversations.info gives it, and only when it is a plain channel name;
// otherwise the id. It joins the person's own turn, never the system
// prompt, so it carries no more authority than what the person writes.
//
// What a person looks at is held in this replica's memory only: an event
// that reached another replica is not known here, and a question this
// replica answers then simply has no such line. It is a hint, not state
// worth sharing through the store.

// Bounds of the memory of what people look at: at most maxViews people
// (the least recently changed go first), each forgotten after viewTTL,
// as Slack sends no event when a person closes the bot's conversation.
const (
	maxViews = 10000
	viewTTL  = 30 * time.Minute
)

// viewed is the channel a person was last seen looking at.
type viewed struct {
	channel string // its id
	dm      string // the person's DM with the bot the event named ("" when it named none)
}

// agentView is what the bot remembers of the agent view. Its zero value
// is ready to use.
type agentView struct {
	once  sync.Once
	views *expirable.LRU[string, viewed] // by user id
}

func (v *agentView) lru() *expirable.LRU[string, viewed] {
	v.once.Do(func() { v.views = expirable.NewLRU[string, viewed](maxViews, nil, viewTTL) })
	return v.views
}

// look records that user now looks at channel. Anything but a channel id
// — nothing (Slack sends an empty context then), a canvas, a list, a
// value of another shape — forgets what they looked at before.
func (v *agentView) look(user, dm, channel string) {
	switch {
	case user == "":
	case config.IsChannelID(channel):
		v.lru().Add(user, viewed{channel: channel, dm: dm})
	default:
		v.lru().Remove(user)
	}
}

// looking is the channel user was last seen looking at, if any.
func (v *agentView) looking(user string) (viewed, bool) {
	return v.lru().Get(user)
}

// onAgentView handles the agent view's events; others are ignored.
func (b *Bot) onAgentView(ev slackevents.EventsAPIEvent) {
	team := eventTeam(ev)
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppHomeOpenedEvent:
		if e.Context != nil {
			b.view.look(e.User, e.Channel, contextChannel(*e.Context))
		}
		if e.Tab == "messages" {
			b.offerPrompts(e.User, team, e.Channel, "")
		}
	case *slackevents.AssistantThreadStartedEvent:
		t := e.AssistantThread
		if t.Context.ChannelID != "" {
			b.view.look(t.UserID, t.ChannelID, t.Context.ChannelID)
		}
		b.offerPrompts(t.UserID, team, t.ChannelID, t.ThreadTimeStamp)
	case *slackevents.AssistantThreadContextChangedEvent:
		t := e.AssistantThread
		b.view.look(t.UserID, t.ChannelID, t.Context.ChannelID)
	case *slackevents.AppContextChangedEvent:
		b.view.look(e.User, e.Channel, contextChannel(e.Context))
	}
}

// contextChannel is the channel an app context names first ("" for none);
// Slack orders its entities by relevance.
func contextChannel(c slackevents.AppContext) string {
	for _, e := range c.Entities {
		switch {
		case e.Type == slackevents.AppContextEntityChannel:
			return e.Value
		case e.Type == slackevents.AppContextEntityMessageContext && e.Message != nil:
			return e.Message.ChannelID
		}
	}
	return ""
}

// promptsPatience bounds a call setting suggested prompts, which only
// decorates a conversation nobody has written in yet.
const promptsPatience = 10 * time.Second

// offerPrompts sets, off the envelope loop, the suggested prompts of the
// agent that user's conversation in channel (threadTS: an assistant
// thread, "" for the agent view's conversation) routes to. Nothing is set
// — and nothing posted — for a person the bot does not answer, where DMs
// are off, when routing refuses the conversation, when the agent has no
// prompts, or when the call's budget has no token at once.
func (b *Bot) offerPrompts(user, team, channel, threadTS string) {
	if user == "" || user == b.botUserID || channel == "" || !onOff(b.cfg.DMs) || b.closing.Load() {
		return
	}
	if !b.anyPrompts() {
		b.log.Debug("no suggested prompts to set", zap.String("user", user), zap.String("channel", channel))
		return
	}
	b.asides.Add(1)
	go func() {
		defer b.asides.Done()
		defer b.survive("suggested prompts")
		ctx, cancel := context.WithTimeout(b.cosmeticCtx(context.Background()), promptsPatience)
		defer cancel()
		log := b.log.With(zap.String("user", user), zap.String("channel", channel))
		if !b.ownOrg(ctx, user, team, "") {
			log.Info("suggested prompts not set for a person of another organisation")
			return
		}
		a, why := b.route(ctx, request{kind: kindDM, channel: channel, user: user, threadTS: threadTS})
		if a == nil {
			log.Info("suggested prompts not set", zap.String("why", why))
			return
		}
		prompts := b.promptsOf(a)
		if len(prompts) == 0 {
			log.Debug("no suggested prompts to set", zap.String("agent", a.Name))
			return
		}
		ctx, ok := b.limiter.TakeNow(ctx, "assistant.threads.setSuggestedPrompts", channel, ratelimit.Cosmetic)
		if !ok {
			log.Info("suggested prompts not set: their rate budget is spent")
			return
		}
		params := slackapi.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: channel, ThreadTS: threadTS}
		for _, p := range prompts {
			params.AddPrompt(p.Title, p.Message)
		}
		if err := b.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params); err != nil {
			log.Info("suggested prompts not set", zap.Error(slackError(err)))
		}
	}()
}

// anyPrompts reports whether any agent, or slack.suggested_prompts, has
// suggested prompts: without any, opening a conversation costs no call.
func (b *Bot) anyPrompts() bool {
	if len(b.cfg.SuggestedPrompts) > 0 {
		return true
	}
	for _, a := range b.conf.Agents {
		if len(a.SuggestedPrompts) > 0 {
			return true
		}
	}
	return false
}

// promptsOf is the suggested prompts of agent a: its own, else, for the
// default agent, slack.suggested_prompts. They are the operator's words
// and are sent as Slack takes them, plain text Slack shows on a button
// and sends as the person's message when pressed: nothing in them is
// rewritten.
func (b *Bot) promptsOf(a *config.Agent) []config.SuggestedPrompt {
	if len(a.SuggestedPrompts) > 0 {
		return a.SuggestedPrompts
	}
	if d, err := b.defaultAgent(); err == nil && d == a {
		return b.cfg.SuggestedPrompts
	}
	return nil
}

// maxChannelNameLen is the longest channel name Slack allows.
const maxChannelNameLen = 80

// viewContext is the line of context a request gets from the agent view
// ("" for none): the channel its asker was last seen looking at, for a
// question in their own DM with the bot.
func (b *Bot) viewContext(ctx context.Context, req request) string {
	if req.kind != kindDM {
		return ""
	}
	v, ok := b.view.looking(req.user)
	if !ok || (v.dm != "" && v.dm != req.channel) {
		return ""
	}
	if strings.HasPrefix(v.channel, "D") {
		return "The user is looking at a direct message conversation."
	}
	where := v.channel
	if name, known := b.channelName(ctx, v.channel); known && plainChannelName(name) {
		where = "#" + name
	}
	return "The user is looking at " + where + "."
}

// plainChannelName reports whether name reads as a Slack channel name:
// letters, digits, hyphens, underscores and dots, at most
// maxChannelNameLen. Anything else (spaces, punctuation, line breaks) is
// never put before the model as a name.
func plainChannelName(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > maxChannelNameLen {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

// withViewContext is the question's text with its line of context from
// the agent view before it, when it has one.
func (b *Bot) withViewContext(ctx context.Context, req request) string {
	line := b.viewContext(ctx, req)
	if line == "" {
		return req.text
	}
	return "[" + line + "]\n\n" + req.text
}
