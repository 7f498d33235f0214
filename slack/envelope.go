package slack

import (
	"context"
	"encoding/json"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/slack/storeguard"
)

// Envelopes. Every envelope is acknowledged before any work, and work is
// started on goroutines of its own, so the next envelope is acknowledged
// without waiting for a session. An event is answered by the replica whose
// dedup call records its event_id first; a store call made on this loop is
// bounded by loopCallTimeout, and while the store is down the decision is
// taken off the loop.

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
			// An ack waits for the connection's writer; one the shutdown
			// closed never takes it, so the wait ends with ctx.
			switch cb, _ := evt.Data.(slackapi.InteractionCallback); {
			case evt.Type == socketmode.EventTypeSlashCommand:
				b.ackSlash(ctx, sm, evt)
			case evt.Type == socketmode.EventTypeInteractive && cb.Type == slackapi.InteractionTypeViewSubmission:
				// The answer to a submission is its ack: checked here.
				_ = sm.AckCtx(ctx, evt.Request.EnvelopeID, b.viewAck(cb))
			default:
				_ = sm.AckCtx(ctx, evt.Request.EnvelopeID, nil)
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
				_ = sm.AckCtx(ctx, env.ID, nil)
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
func (b *Bot) ackSlash(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	text := "Working on it…"
	if b.closing.Load() {
		text = "I'm restarting; please ask again in a minute."
	}
	_ = sm.AckCtx(ctx, evt.Request.EnvelopeID, map[string]any{"response_type": "ephemeral", "text": text})
}

// once reports whether key (a slash command's envelope, a feedback click)
// was not seen before. Slack never redelivers a slash command nor a click,
// so a store that cannot answer lets it through.
func (b *Bot) once(ctx context.Context, key string) bool {
	first, err := b.events.first(ctx, key, "")
	if ctx.Err() != nil {
		return false
	}
	return first || err != nil
}

// onEventsAPI handles an Events API envelope once per event: a redelivery
// of an event already seen is dropped. The dedup call uses the envelope id
// as its token, so a store that may have run a call whose caller saw an
// error (Redis: a timeout) does not take a retry of the same delivery for
// a duplicate, while a redelivery, in an envelope of its own, still is.
func (b *Bot) onEventsAPI(ctx context.Context, evt socketmode.Event) {
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return
	}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
		envelope, attempt := evt.Request.EnvelopeID, evt.Request.RetryAttempt
		first, err := false, storeguard.ErrDown
		if !b.guard.Down() {
			first, err = b.events.first(ctx, "event:"+cb.EventID, envelope)
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

// dedupSlowly decides on an event whose dedup call failed: it retries the
// store, and when it stays down past the store patience it handles a first
// delivery but drops a redelivery. A first delivery went to one connection
// only and was acknowledged, so no other replica can be answering it. A
// redelivery means an earlier attempt went somewhere, usually to a replica
// that answered it and was slow to acknowledge: answering again would put a
// second answer in the thread. Only a replica that died before acking
// leaves a question unanswered this way, and its asker sees no answer
// rather than two.
func (b *Bot) dedupSlowly(ctx context.Context, eventID, envelopeID string, attempt int) bool {
	var first bool
	err := b.guard.Decide(ctx, func(ctx context.Context) error {
		var err error
		first, err = b.events.first(ctx, "event:"+eventID, envelopeID)
		return err
	})
	switch {
	case err == nil:
		if !first {
			b.log.Info("duplicate event ignored", zap.String("event_id", eventID), zap.Int("retry_attempt", attempt))
		}
		return first
	case attempt == 0:
		b.guard.Fallback("dedup store unavailable; answering a first delivery", zap.String("event_id", eventID))
		return ctx.Err() == nil
	default:
		b.guard.Fallback("dedup store unavailable; a redelivered event is dropped rather than risk a second answer",
			zap.String("event_id", eventID), zap.Int("retry_attempt", attempt))
		return false
	}
}
