package ratelimit

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Asking the shared buckets. A store that stopped answering must slow
// neither the calls nor the bot: each take from it is bounded by
// storeTimeout, and after a failure the limiter budgets this replica alone
// for storeCooldown, then lets one call at a time ask the store again
// while the others go on with the local buckets.
const (
	storeTimeout  = 200 * time.Millisecond
	storeCooldown = 5 * time.Second
)

// errStoreSlow is a take from the store that did not answer in time.
var errStoreSlow = errors.New("the state store did not answer within " + storeTimeout.String())

// storeBreaker is what the limiter knows of the store's health.
type storeBreaker struct {
	down      bool      // the last take from the store failed
	downUntil time.Time // until then nobody asks it
	probing   bool      // one call is asking it again
}

// take takes from the shared bucket, or from this process's own while the
// store fails.
func (l *Transport) take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	if probe, ask := l.askStore(); ask {
		d, err := l.storeTake(ctx, key, rate, burst, keep)
		switch {
		case err == nil:
			l.storeAnswered()
			return d, nil
		case ctx.Err() != nil:
			l.storeUnknown(probe)
			return 0, ctx.Err()
		}
		l.storeFailed(err)
	}
	return l.local.Take(ctx, key, rate, burst, keep)
}

// askStore reports whether this take may ask the store, and whether it
// is the one probe of a store that failed.
func (l *Transport) askStore() (probe, ask bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := &l.health
	switch {
	case !h.down:
		return false, true
	case h.probing || l.clock.Now().Before(h.downUntil):
		return false, false
	}
	h.probing = true
	return true, true
}

// storeTake is one take from the store, given up after storeTimeout
// whatever the store's own timeouts: an abandoned take ends on its own.
func (l *Transport) storeTake(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	type result struct {
		d   time.Duration
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := l.store.Take(sctx, key, rate, burst, keep)
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-sctx.Done():
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, errStoreSlow
	}
}

// storeAnswered closes the breaker: the shared buckets are used again.
func (l *Transport) storeAnswered() {
	l.mu.Lock()
	back := l.health.down
	l.health = storeBreaker{}
	l.mu.Unlock()
	if back {
		l.log.Info("the shared Slack rate budget answers again")
	}
}

// storeUnknown gives up a probe whose caller left before the store
// answered; the next take probes instead.
func (l *Transport) storeUnknown(probe bool) {
	if probe {
		l.mu.Lock()
		l.health.probing = false
		l.mu.Unlock()
	}
}

// storeFailed opens the breaker for storeCooldown, and says so once a
// minute.
func (l *Transport) storeFailed(err error) {
	l.mu.Lock()
	now := l.clock.Now()
	l.health = storeBreaker{down: true, downUntil: now.Add(storeCooldown)}
	warn := now.Sub(l.warnedAt) > time.Minute
	if warn {
		l.warnedAt = now
	}
	l.mu.Unlock()
	if warn {
		l.log.Warn("the shared Slack rate budget is unavailable; budgeting this replica alone", causeField(l.cause, err))
	}
}

// causeField is err for the log as cause renders it, or nothing without
// cause: a store's raw error may name its host.
func causeField(cause func(error) string, err error) zap.Field {
	if cause == nil {
		return zap.Skip()
	}
	return zap.String("error", cause(err))
}
