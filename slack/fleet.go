package slack

import (
	"context"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/state"
)

// What replicas sharing a state store rely on, and what the bot does when
// the store stops answering.
//
// An event is answered by the replica whose Once call records its event_id
// first. A session runs only while its replica holds the thread's lease and
// one of the max_concurrent_sessions slots, both renewed every third of
// state.lease_ttl, so a replica that dies frees them within one TTL.
//
// When the store fails, decisions that need it (dedup, the lease, the
// slot) retry with backoff for up to Options.StorePatience (20 s by
// default) before the bot goes on without it, and every failure is logged
// once per kind until the store answers again. Once one decision has
// waited out the patience, the store counts as down: later decisions try
// it once and go straight to their fallback, until a store call succeeds.
// A session already running is never stopped by the store.
//
// A Stop click may reach any replica. The one running the session stops
// it; another records the stop in the store ("stop:<session>:<user>"),
// and the running replica, which looks for its asker's and each admin's
// stop every stopPoll while the session is queued or running, stops it.

// DefaultStorePatience is how long a decision that needs the state store
// waits for it to answer again before the bot decides without it.
const DefaultStorePatience = 20 * time.Second

// Backoff between retries of a failing store call.
const (
	storeRetryFirst = 100 * time.Millisecond
	storeRetryMax   = 2 * time.Second
)

// Kinds of store call, as the failure log names them.
const (
	storeDedup   = "event dedup"
	storeLease   = "thread lease"
	storeSlots   = "session slots"
	storeThreads = "bot threads"
	storeRecords = "session records"
	storeStops   = "stop clicks"
)

// storeHealth remembers which kinds of store call are failing, so that an
// outage costs one warning per kind and one line when the store answers
// again, not a line per call. A store that flaps (calls under way when it
// came back, timeouts under load) is warned about at most once per kind
// every storeWarnEvery.
type storeHealth struct {
	mu        sync.Mutex
	kinds     map[string]*storeKind
	fallbacks map[string]time.Time // decision → when it was last logged at warn
	// downSince is when a decision last waited out the store patience
	// without an answer; zero once a store call succeeds again.
	downSince time.Time
}

type storeKind struct {
	failing  bool      // the last call failed
	warned   bool      // this failure was logged, so its end will be too
	lastWarn time.Time // when a failure of this kind was last logged
}

// storeWarnEvery bounds how often one kind of failing call is logged.
const storeWarnEvery = time.Minute

// storeResult notes the outcome of a store call of kind and logs the
// changes: a kind starting to fail, and the store answering it again.
func (b *Bot) storeResult(kind string, err error) {
	h := &b.health
	h.mu.Lock()
	if h.kinds == nil {
		h.kinds = map[string]*storeKind{}
	}
	k := h.kinds[kind]
	if k == nil {
		k = &storeKind{}
		h.kinds[kind] = k
	}
	warn, recovered := false, false
	if err == nil {
		h.downSince = time.Time{}
	}
	if err != nil {
		k.failing = true
		if !k.warned && time.Since(k.lastWarn) >= storeWarnEvery {
			k.warned, k.lastWarn, warn = true, time.Now(), true
		}
	} else if k.failing {
		k.failing = false
		recovered, k.warned = k.warned, false
	}
	h.mu.Unlock()
	switch {
	case warn:
		b.log.Warn("state store failing; retrying", zap.String("calls", kind), zap.String("error", redact.Cause(err)))
	case recovered:
		b.log.Info("state store answering again", zap.String("calls", kind))
	}
}

// storeDown reports whether a decision has waited out the store patience
// since the store last answered: later decisions then try the store once
// instead of waiting for it again.
func (b *Bot) storeDown() bool {
	b.health.mu.Lock()
	defer b.health.mu.Unlock()
	return !b.health.downSince.IsZero()
}

// storeGaveUp records that a decision waited out the store patience.
func (b *Bot) storeGaveUp() {
	b.health.mu.Lock()
	defer b.health.mu.Unlock()
	if b.health.downSince.IsZero() {
		b.health.downSince = time.Now()
	}
}

// fallback logs a decision the bot made without the store: at warn at most
// once per storeWarnEvery for each msg, else at debug, so that a long
// outage does not cost a warning per event.
func (b *Bot) fallback(msg string, fields ...zap.Field) {
	h := &b.health
	h.mu.Lock()
	warn := time.Since(h.fallbacks[msg]) >= storeWarnEvery
	if warn {
		if h.fallbacks == nil {
			h.fallbacks = map[string]time.Time{}
		}
		h.fallbacks[msg] = time.Now()
	}
	h.mu.Unlock()
	if warn {
		b.log.Warn(msg, fields...)
	} else {
		b.log.Debug(msg, fields...)
	}
}

// retryStore calls f until it succeeds, ctx ends or the store patience has
// passed, backing off between attempts, and returns f's last error. While
// the store is down (storeDown) one failed attempt is the answer.
func (b *Bot) retryStore(ctx context.Context, kind string, f func(context.Context) error) error {
	deadline := time.Now().Add(b.patience)
	wait := storeRetryFirst
	for {
		err := f(ctx)
		if err != nil && ctx.Err() != nil {
			// Cancelled (a Stop, the shutdown): not the store's failure.
			return err
		}
		b.storeResult(kind, err)
		if err == nil {
			return nil
		}
		if time.Now().Add(wait).After(deadline) {
			b.storeGaveUp()
			return err
		}
		if b.storeDown() {
			return err
		}
		b.log.Debug("state store call failed; retrying", zap.String("calls", kind), zap.Duration("in", wait))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(wait*2, storeRetryMax)
	}
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
	err := b.retryStore(ctx, storeDedup, func(ctx context.Context) error {
		var err error
		first, err = b.dedup(ctx, eventID, envelopeID)
		return err
	})
	switch {
	case err == nil:
		if !first {
			b.log.Info("duplicate event ignored", zap.String("event_id", eventID), zap.Int("retry_attempt", attempt))
		}
		return first
	case attempt == 0:
		b.fallback("dedup store unavailable; answering a first delivery", zap.String("event_id", eventID))
		return ctx.Err() == nil
	default:
		b.fallback("dedup store unavailable; a redelivered event is dropped rather than risk a second answer",
			zap.String("event_id", eventID), zap.Int("retry_attempt", attempt))
		return false
	}
}

// dedup records the event eventID for the delivery envelopeID and reports
// whether it was seen for the first time. A store that may have run a call
// whose caller saw an error (Redis: a timeout) is asked with the envelope
// id as token, so retrying the same delivery is not taken for a duplicate
// while a redelivery, in an envelope of its own, still is.
func (b *Bot) dedup(ctx context.Context, eventID, envelopeID string) (bool, error) {
	key := "event:" + eventID
	if t, ok := b.state.(state.TokenOnce); ok && envelopeID != "" {
		return t.OnceToken(ctx, key, envelopeID, eventTTL)
	}
	return b.state.Once(ctx, key, eventTTL)
}

// abandonedNote replaces a progress message whose session died with its
// replica: the answer it stood for will not come.
const abandonedNote = "_No answer: the bot stopped while working on this. Please ask again._"

// isProgress reports whether a message of the thread is one of the bot's
// progress messages: the only ones carrying the Stop button.
func isProgress(m slackapi.Message) bool {
	for _, bl := range m.Blocks.BlockSet {
		a, ok := bl.(*slackapi.ActionBlock)
		if !ok || a.Elements == nil {
			continue
		}
		for _, el := range a.Elements.ElementSet {
			if btn, ok := el.(*slackapi.ButtonBlockElement); ok && btn.ActionID == stopAction {
				return true
			}
		}
	}
	return false
}

// closeAbandoned replaces progress messages left in a thread by sessions
// that can no longer answer. Only the holder of the thread's lease calls
// it, and a session shows progress only while holding that lease, so every
// progress message but the caller's own belongs to a session that died
// with its replica (or lost its answer) and would otherwise say "working"
// forever.
func (b *Bot) closeAbandoned(ctx context.Context, channel string, msgs []slackapi.Message) {
	for _, m := range msgs {
		if _, err := b.send(ctx, channel, "", m.Timestamp, abandonedMessage()); err != nil {
			b.log.Warn("an abandoned progress message could not be closed", zap.Error(slackError(err)))
			continue
		}
		b.log.Info("closed the progress message of a session that died", zap.String("channel", channel), zap.String("ts", m.Timestamp))
	}
}

// messageTS is the progress message's timestamp, "" until it is posted.
func (p *progress) messageTS() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ts
}
