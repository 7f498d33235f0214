package slack

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/redact"
)

// Kinds of request, as routing rules name them.
const (
	kindMention = "mentions"
	kindDM      = "dms"
	kindSlash   = "slash"
)

// request is one question for an agent, whatever way it came.
type request struct {
	kind     string
	channel  string
	user     string
	text     string
	ts       string // the user's message ("" for the slash command)
	threadTS string // where the answer goes ("" for the slash command: a new message)
	followup bool
	// team and enterprise are the asker's as the payload tells them ("" where
	// it does not).
	team, enterprise string
}

// stopAction is the action id of the Stop button on a progress message.
const stopAction = "slackbot_stop"

// serve acknowledges every envelope at once and then handles it. Work is
// started on goroutines of its own, so the next envelope is acknowledged
// without waiting for a session.
func (b *Bot) serve(ctx context.Context, sm *socketmode.Client) {
	for {
		var evt socketmode.Event
		select {
		case <-ctx.Done():
			return
		case evt = <-sm.Events:
		}
		if evt.Request != nil && evt.Request.EnvelopeID != "" {
			if evt.Type == socketmode.EventTypeSlashCommand {
				b.ackSlash(sm, evt)
			} else {
				_ = sm.Ack(*evt.Request)
			}
		}
		switch evt.Type {
		case socketmode.EventTypeEventsAPI:
			b.onEventsAPI(ctx, evt)
		case socketmode.EventTypeSlashCommand:
			b.onSlash(ctx, evt)
		case socketmode.EventTypeInteractive:
			b.onInteractive(ctx, evt)
		case socketmode.EventTypeConnected:
			b.connected.Store(true)
			b.log.Info("socket mode connected")
		case socketmode.EventTypeConnecting:
			b.connected.Store(false)
		case socketmode.EventTypeDisconnect:
			b.connected.Store(false)
			b.log.Info("slack asked to reconnect")
		case socketmode.EventTypeConnectionError:
			b.connected.Store(false)
			b.log.Warn("socket mode error", zap.Any("error", evt.Data))
		case socketmode.EventTypeIncomingError:
			b.log.Warn("socket mode error", zap.Any("error", evt.Data))
		case socketmode.EventTypeErrorBadMessage:
			// slack-go hands over what it cannot parse without a request
			// to ack; Slack would redeliver it, so ack it by its id.
			bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
			var env struct {
				ID   string `json:"envelope_id"`
				Type string `json:"type"`
			}
			if bad != nil && json.Unmarshal(bad.Message, &env) == nil && env.ID != "" {
				_ = sm.Ack(socketmode.Request{EnvelopeID: env.ID})
			}
			b.log.Warn("an envelope of an unknown shape was acknowledged and ignored", zap.String("type", env.Type))
		case socketmode.EventTypeInvalidAuth:
			b.connected.Store(false)
			b.log.Error("slack refused the app token (invalid_auth)")
		}
	}
}

// ackSlash acknowledges a slash command with an ephemeral "working on it",
// which Slack shows only to the person who typed it.
func (b *Bot) ackSlash(sm *socketmode.Client, evt socketmode.Event) {
	if b.closing.Load() {
		_ = sm.Ack(*evt.Request, map[string]any{"response_type": "ephemeral", "text": "I'm restarting; please ask again in a minute."})
		return
	}
	_ = sm.Ack(*evt.Request, map[string]any{"response_type": "ephemeral", "text": "Working on it…"})
}

// once reports whether key (a slash command's envelope, a feedback click)
// was not seen before. Slack never redelivers a slash command nor a click,
// so a store that cannot answer lets it through. The call is bounded by
// dedupCallTimeout: it may run on the envelope loop.
func (b *Bot) once(ctx context.Context, key string) bool {
	octx, cancel := context.WithTimeout(ctx, dedupCallTimeout)
	defer cancel()
	ok, err := b.state.Once(octx, key, eventTTL)
	if err != nil && ctx.Err() != nil {
		return false
	}
	b.storeResult(storeDedup, err)
	return ok || err != nil
}

// errStoreDown stands for the dedup call not made on the envelope loop
// while the store is down.
var errStoreDown = errors.New("state store down")

// dedupCallTimeout bounds the dedup call made on the envelope loop, so a
// store that hangs delays the next envelopes by at most this much.
const dedupCallTimeout = time.Second

func (b *Bot) onEventsAPI(ctx context.Context, evt socketmode.Event) {
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return
	}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
		envelope, attempt := evt.Request.EnvelopeID, evt.Request.RetryAttempt
		first, err := false, errStoreDown
		// While the store is down the decision's one try is made off the
		// loop, so a store that hangs does not hold up the acks.
		if !b.storeDown() {
			octx, cancel := context.WithTimeout(ctx, dedupCallTimeout)
			first, err = b.dedup(octx, cb.EventID, envelope)
			cancel()
			if err == nil || ctx.Err() == nil {
				b.storeResult(storeDedup, err)
			}
		}
		if err != nil {
			// Retrying takes time: decide on a goroutine of its own, so
			// the next envelopes are still read and acknowledged.
			b.sessions.Add(1)
			go func() {
				defer b.sessions.Done()
				defer b.survive("an event's dedup")
				if b.dedupSlowly(ctx, cb.EventID, envelope, attempt) {
					b.onEvent(ctx, ev)
				}
			}()
			return
		}
		if !first {
			b.log.Info("duplicate event ignored", zap.String("event_id", cb.EventID), zap.Int("retry_attempt", attempt))
			return
		}
	}
	b.onEvent(ctx, ev)
}

// onEvent handles an Events API event seen for the first time.
func (b *Bot) onEvent(ctx context.Context, ev slackevents.EventsAPIEvent) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		if e.BotID != "" || e.User == "" || e.User == b.botUserID || !onOff(b.cfg.Mentions) {
			return
		}
		thread := e.ThreadTimeStamp
		if thread == "" {
			thread = e.TimeStamp
		}
		b.start(request{kind: kindMention, channel: e.Channel, user: e.User, text: b.stripMention(e.Text), ts: e.TimeStamp, threadTS: thread,
			team: eventTeam(ev)})
	case *slackevents.MessageEvent:
		b.onMessage(ctx, e, eventTeam(ev))
	case *slackevents.ChannelCreatedEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	case *slackevents.ChannelRenameEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	case *slackevents.GroupRenameEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	}
}

// onMessage handles a plain message: a DM, or a reply in a thread the bot
// answered. Bots (this one included), edits and deletions are ignored, and
// so are messages that mention the bot: app_mention brings those.
func (b *Bot) onMessage(ctx context.Context, e *slackevents.MessageEvent, team string) {
	switch {
	case e.BotID != "" || e.User == "" || e.User == b.botUserID:
		return
	case e.SubType != "" && e.SubType != "file_share" && e.SubType != "thread_broadcast":
		return
	case strings.Contains(e.Text, "<@"+b.botUserID+">") && !e.IsIM():
		return
	}
	thread := e.ThreadTimeStamp
	if thread == "" {
		thread = e.TimeStamp
	}
	if e.IsIM() {
		if onOff(b.cfg.DMs) {
			b.start(request{kind: kindDM, channel: e.Channel, user: e.User, text: b.stripMention(e.Text), ts: e.TimeStamp, threadTS: thread, team: team})
		}
		return
	}
	if e.ThreadTimeStamp == "" || e.ThreadTimeStamp == e.TimeStamp || !onOff(b.cfg.ThreadFollowups) {
		return
	}
	ours, err := b.state.Marked(ctx, threadKey(e.Channel, e.ThreadTimeStamp))
	b.storeResult(storeThreads, err)
	if err != nil || !ours {
		return
	}
	b.start(request{kind: kindMention, channel: e.Channel, user: e.User, text: e.Text, ts: e.TimeStamp, threadTS: thread, followup: true, team: team})
}

func (b *Bot) onSlash(ctx context.Context, evt socketmode.Event) {
	cmd, ok := evt.Data.(slackapi.SlashCommand)
	if !ok || b.cfg.SlashCommand == "" || cmd.Command != b.cfg.SlashCommand {
		return
	}
	if !b.once(ctx, "envelope:"+evt.Request.EnvelopeID) {
		return
	}
	text := strings.TrimSpace(cmd.Text)
	if text == "" {
		_ = b.ephemeral(ctx, cmd.ChannelID, cmd.UserID, "", "Ask a question after the command, like `"+cmd.Command+" what changed in the last release?`")
		return
	}
	b.start(request{kind: kindSlash, channel: cmd.ChannelID, user: cmd.UserID, text: text, team: cmd.TeamID, enterprise: cmd.EnterpriseID})
}

func (b *Bot) onInteractive(ctx context.Context, evt socketmode.Event) {
	cb, ok := evt.Data.(slackapi.InteractionCallback)
	if !ok || cb.Type != slackapi.InteractionTypeBlockActions {
		return
	}
	b.clickFromOwnOrg(ctx, cb, b.onActions)
}

// onActions handles the actions of a click by a person the bot answers.
func (b *Bot) onActions(ctx context.Context, cb slackapi.InteractionCallback) {
	for _, a := range cb.ActionCallback.BlockActions {
		switch a.ActionID {
		case stopAction:
			b.stop(ctx, a.Value, cb.User.ID, cb.Channel.ID)
		case feedbackAction:
			b.onFeedback(cb, a)
		}
	}
}

var mentionRe = regexp.MustCompile(`<@[A-Z0-9]+>`)

// stripMention removes the bot's own mention from a question; other
// mentions stay, as the people they name matter to it.
func (b *Bot) stripMention(text string) string {
	text = strings.ReplaceAll(text, "<@"+b.botUserID+">", "")
	return strings.TrimSpace(text)
}

func threadKey(channel, ts string) string { return "thread:" + channel + "/" + ts }

func onOff(b *bool) bool { return b == nil || *b }

// slackError words a Slack API error by its code alone, and any other
// error as redact.Error does, without URL or address.
func slackError(err error) error {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		return errors.New("slack: " + se.Err)
	}
	return redact.Error("slack", err)
}
