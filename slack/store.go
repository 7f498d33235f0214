package slack

import (
	"context"
	"strings"
	"time"

	"github.com/slackbot/slackbot/slack/storeguard"
	"github.com/slackbot/slackbot/state"
)

// The headend never holds the state store itself: it holds the narrow
// views below, each the calls one concern makes, and every call through
// them passes the store guard (a timeout, the breaker, one log line per
// outage). A store call that skipped the guard could stall the envelope
// loop on a hung store, or warn on every request during an outage.

// Kinds of store call, as the failure log names them.
const (
	storeDedup    = "event dedup"
	storeLease    = "thread lease"
	storeSlots    = "session slots"
	storeThreads  = "bot threads"
	storeRecords  = "session records"
	storeStops    = "stop clicks"
	storeProgress = "progress records"
	storeQuotas   = "quota counters"
	storeCounts   = "fleet counts"
)

// Timeouts of store calls by what waits for them.
const (
	// loopCallTimeout bounds a call made on the envelope loop (dedup, the
	// follow-up check), so a store that hangs delays the envelopes behind
	// it by at most this much.
	loopCallTimeout = time.Second
	// progressCallTimeout bounds a call about progress records and
	// liveness: they decorate a session and must not hold it up.
	progressCallTimeout = 2 * time.Second
)

// events tells new events and clicks from ones seen before.
type events interface {
	// first records key and reports whether it is seen for the first
	// time; token names the delivery where the store can tell a retry of
	// one delivery from a redelivery ("" where there is none).
	first(ctx context.Context, key, token string) (bool, error)
}

// claims are thread leases and counting slots.
type claims interface {
	claim(ctx context.Context, c state.Claim) (lease, slot bool, err error)
	unclaim(ctx context.Context, c state.Claim) error
	lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	acquire(ctx context.Context, name, holder string, limit int, ttl time.Duration) (bool, error)
	release(ctx context.Context, name, holder string) error
}

// marks are keys remembered for a while: the bot's threads, Stop clicks,
// replicas alive.
type marks interface {
	mark(ctx context.Context, key string, ttl time.Duration) error
	marked(ctx context.Context, key string) (bool, error)
}

// records are what the bot keeps of sessions and their progress messages.
type records interface {
	putSession(ctx context.Context, r state.SessionRecord) error
	session(ctx context.Context, id string) (state.SessionRecord, bool, error)
	setFeedback(ctx context.Context, id string, f state.Feedback) error
	putProgress(ctx context.Context, p state.Progress) error
	dropProgress(ctx context.Context, session string) error
	progresses(ctx context.Context) ([]state.Progress, error)
}

// counters are the usage counters daily budgets count in, and the fleet's
// count of progress messages (ratelimit.Counters).
type counters interface {
	Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error)
	Get(ctx context.Context, key string) (float64, error)
}

// guarded is the state store behind the guard: every view above.
type guarded struct {
	s state.Store
	g *storeguard.Guard
}

// call runs f through the guard, as a call of kind bounded by timeout.
func call[T any](ctx context.Context, x guarded, kind string, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	return storeguard.Do(ctx, x.g, kind, timeout, f)
}

// do is call for a store call with nothing to return.
func do(ctx context.Context, x guarded, kind string, timeout time.Duration, f func(context.Context) error) error {
	return x.g.Call(ctx, kind, timeout, f)
}

func (x guarded) first(ctx context.Context, key, token string) (bool, error) {
	return call(ctx, x, storeDedup, loopCallTimeout, func(ctx context.Context) (bool, error) {
		if t, ok := x.s.(state.TokenOnce); ok && token != "" {
			return t.OnceToken(ctx, key, token, eventTTL)
		}
		return x.s.Once(ctx, key, eventTTL)
	})
}

func (x guarded) claim(ctx context.Context, c state.Claim) (lease, slot bool, err error) {
	both, err := call(ctx, x, storeLease, 0, func(ctx context.Context) ([2]bool, error) {
		l, s, err := state.ClaimBoth(ctx, x.s, c)
		return [2]bool{l, s}, err
	})
	return both[0], both[1], err
}

func (x guarded) unclaim(ctx context.Context, c state.Claim) error {
	return do(ctx, x, storeLease, 0, func(ctx context.Context) error { return state.ReleaseBoth(ctx, x.s, c) })
}

func (x guarded) lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	return call(ctx, x, storeLease, 0, func(ctx context.Context) (bool, error) { return x.s.Lock(ctx, key, owner, ttl) })
}

func (x guarded) acquire(ctx context.Context, name, holder string, limit int, ttl time.Duration) (bool, error) {
	return call(ctx, x, storeSlots, 0, func(ctx context.Context) (bool, error) {
		return x.s.Acquire(ctx, name, holder, limit, ttl)
	})
}

func (x guarded) release(ctx context.Context, name, holder string) error {
	return do(ctx, x, storeSlots, 0, func(ctx context.Context) error { return x.s.Release(ctx, name, holder) })
}

// markKind is the kind of a mark's calls, by its key's prefix.
func markKind(key string) string {
	switch {
	case strings.HasPrefix(key, stopPrefix):
		return storeStops
	case strings.HasPrefix(key, alivePrefix):
		return storeProgress
	}
	return storeThreads
}

func (x guarded) mark(ctx context.Context, key string, ttl time.Duration) error {
	return do(ctx, x, markKind(key), loopCallTimeout, func(ctx context.Context) error { return x.s.Mark(ctx, key, ttl) })
}

func (x guarded) marked(ctx context.Context, key string) (bool, error) {
	return call(ctx, x, markKind(key), loopCallTimeout, func(ctx context.Context) (bool, error) { return x.s.Marked(ctx, key) })
}

func (x guarded) putSession(ctx context.Context, r state.SessionRecord) error {
	return do(ctx, x, storeRecords, 0, func(ctx context.Context) error { return x.s.PutSession(ctx, r) })
}

func (x guarded) session(ctx context.Context, id string) (state.SessionRecord, bool, error) {
	type found struct {
		r  state.SessionRecord
		ok bool
	}
	f, err := call(ctx, x, storeRecords, 0, func(ctx context.Context) (found, error) {
		r, ok, err := x.s.Session(ctx, id)
		return found{r, ok}, err
	})
	return f.r, f.ok, err
}

func (x guarded) setFeedback(ctx context.Context, id string, f state.Feedback) error {
	return do(ctx, x, storeRecords, 0, func(ctx context.Context) error { return x.s.SetFeedback(ctx, id, f) })
}

func (x guarded) putProgress(ctx context.Context, p state.Progress) error {
	return do(ctx, x, storeProgress, progressCallTimeout, func(ctx context.Context) error { return x.s.PutProgress(ctx, p) })
}

func (x guarded) dropProgress(ctx context.Context, session string) error {
	return do(ctx, x, storeProgress, progressCallTimeout, func(ctx context.Context) error { return x.s.DropProgress(ctx, session) })
}

func (x guarded) progresses(ctx context.Context) ([]state.Progress, error) {
	return call(ctx, x, storeProgress, progressCallTimeout, x.s.Progresses)
}

func (x guarded) Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error) {
	return call(ctx, x, counterKind(key), 0, func(ctx context.Context) (float64, error) { return x.s.Add(ctx, key, delta, ttl) })
}

func (x guarded) Get(ctx context.Context, key string) (float64, error) {
	return call(ctx, x, counterKind(key), 0, func(ctx context.Context) (float64, error) { return x.s.Get(ctx, key) })
}

// counterKind is the kind of a counter's calls, by its key's prefix.
func counterKind(key string) string {
	if strings.HasPrefix(key, quotaPrefix) {
		return storeQuotas
	}
	return storeCounts
}
