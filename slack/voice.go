package slack

import (
	"context"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
)

// The bot's voice. Whatever the headend posts or updates — answers,
// continuations, notes, progress, ephemerals — passes blockkit.Voice on
// its way out (send, progress updates, ephemeral): broadcasts notify
// only when the agent allows them, a user mention notifies only the people
// its agent's mentions policy names, disguised links show their target,
// buttons, menu options' urls and images off slack.trusted_hosts become
// links, and only the headend's own controls carry its action ids. A
// message with no request behind it (a refusal, a note on an abandoned
// progress message) gets the strictest voice: nothing notifies anyone.

// reservedActions are the action ids the headend answers to. Only its own
// controls (blockkit.Message.Controls) may carry them.
var reservedActions = []string{stopAction, feedbackAction, approveAction, denyAction, approveThreadAction,
	elicitOpenAction, elicitDeclineAction, elicitCancelAction}

// nameWait bounds the lookup of the name shown for a mention that may not
// notify; past it the mention is shown as "@someone".
const nameWait = 2 * time.Second

// voice is what one request's messages may do: its agent's policy, its
// asker, and the people seen writing in its thread.
type voice struct {
	agent *config.Agent
	asker string

	mu    sync.Mutex
	wrote map[string]bool
}

type voiceKey struct{}

// withVoice gives ctx the voice of request req answered by agent a.
func withVoice(ctx context.Context, req request, a *config.Agent) context.Context {
	return context.WithValue(ctx, voiceKey{}, &voice{agent: a, asker: req.user, wrote: map[string]bool{}})
}

// noteAuthor records that user wrote in the thread of ctx's request, so
// that a mention of them may notify.
func noteAuthor(ctx context.Context, user string) {
	v, _ := ctx.Value(voiceKey{}).(*voice)
	if v == nil || user == "" {
		return
	}
	v.mu.Lock()
	v.wrote[user] = true
	v.mu.Unlock()
}

// voicePolicy is the policy of the messages posted with ctx.
func (b *Bot) voicePolicy(ctx context.Context) blockkit.VoicePolicy {
	// A message naming many strangers costs at most one session's worth
	// of lookups, and none after one ran out of time.
	book := b.newNameBook()
	p := blockkit.VoicePolicy{TrustedHosts: b.cfg.TrustedHosts, ReservedActionIDs: reservedActions,
		Name: func(id string) string {
			nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nameWait)
			defer cancel()
			return book.name(nctx, id)
		}}
	v, _ := ctx.Value(voiceKey{}).(*voice)
	if v == nil || v.agent == nil {
		return p
	}
	p.AllowBroadcasts = v.agent.AllowBroadcasts
	switch v.agent.Mentions {
	case config.MentionsAll:
		p.PingAll = true
	case config.MentionsNone:
	default: // config.MentionsThread, the default
		v.mu.Lock()
		p.Pingable = make(map[string]bool, len(v.wrote)+1)
		for u := range v.wrote {
			p.Pingable[u] = true
		}
		v.mu.Unlock()
		p.Pingable[v.asker] = true
	}
	return p
}

// voiced is m as it may be posted with ctx.
func (b *Bot) voiced(ctx context.Context, m blockkit.Message) blockkit.Message {
	return blockkit.Voice(m, b.voicePolicy(ctx))
}

// ephemeral shows text to user alone, in the thread when thread is set.
func (b *Bot) ephemeral(ctx context.Context, channel, user, thread, text string) error {
	m := b.voiced(ctx, blockkit.Message{Text: text})
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(m.Text, false)}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
	}
	_, err := b.api.PostEphemeralContext(ctx, channel, user, opts...)
	return err
}
