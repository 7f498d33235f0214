package ratelimit

import (
	"context"
	"time"

	"github.com/slackbot/slackbot/slack/storeguard"
)

// Asking the shared buckets. A store that stopped answering must slow
// neither the calls nor the bot: each take from it passes the store guard,
// bounded by storeTimeout; after a failure the guard leaves the store alone
// for storeCooldown, then lets one call at a time ask it again, while the
// others budget this replica alone with the local buckets.
const (
	storeTimeout  = 200 * time.Millisecond
	storeCooldown = 5 * time.Second
)

// storeCalls names the takes from the store in the guard's log.
const storeCalls = "rate budgets"

// take takes from the shared bucket, or from this process's own while the
// store fails.
func (l *Transport) take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	d, err := storeguard.Do(ctx, l.guard, storeCalls, storeTimeout, func(ctx context.Context) (time.Duration, error) {
		return l.store.Take(ctx, key, rate, burst, keep)
	})
	switch {
	case err == nil:
		return d, nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	l.guard.Fallback("the shared Slack rate budget is unavailable; budgeting this replica alone")
	return l.local.Take(ctx, key, rate, burst, keep)
}
