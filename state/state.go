// Package state is what the bot must remember beyond one session and share
// between the goroutines (and, with a shared backend, the replicas) that
// serve Slack: which events were already handled, which thread a session
// is working in, and which threads are the bot's own. Store is the
// interface; Memory keeps it in this process.
package state

import (
	"context"
	"time"
)

// Store remembers keys with expiry. Implementations must be safe for
// concurrent use; every method is atomic.
type Store interface {
	// Once reports whether key is seen for the first time, and remembers it
	// for ttl either way: the dedup of redelivered events.
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Lock takes the lease on key for owner for ttl. It reports false when
	// another owner holds an unexpired lease; an owner locking again
	// renews its own.
	Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// Unlock releases owner's lease on key; another owner's is left alone.
	Unlock(ctx context.Context, key, owner string) error
	// Mark remembers key for ttl (a thread the bot answered in).
	Mark(ctx context.Context, key string, ttl time.Duration) error
	// Marked reports whether key is remembered.
	Marked(ctx context.Context, key string) (bool, error)
	// Close releases the store's resources.
	Close() error
}
