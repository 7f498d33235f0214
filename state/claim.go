package state

import (
	"context"
	"errors"
	"time"
)

// Claim is what a session holds while it runs: the lease on its thread and
// a slot of the concurrency semaphore. The Slack headend takes both when a
// session starts and gives both back when it ends; ClaimBoth and
// ReleaseBoth do each in one step where the store can (one round trip to
// Redis instead of two), and as Lock/Acquire and Release/Unlock otherwise.
type Claim struct {
	Lease, Owner  string // the lease: Lock(Lease, Owner, TTL)
	Slots, Holder string // the slot: Acquire(Slots, Holder, Limit, TTL)
	Limit         int
	TTL           time.Duration
}

// claimer is a store that takes and gives back a Claim in one step.
type claimer interface {
	claim(ctx context.Context, c Claim) (lease, slot bool, err error)
	unclaim(ctx context.Context, c Claim) error
}

// ClaimBoth takes c's lease and, when the lease is taken, one of its
// slots: Lock, then Acquire. It reports which it got; the slot is never
// taken without the lease, so a session waiting for its thread holds no
// slot. Either part renews what the claimer already holds.
func ClaimBoth(ctx context.Context, s Store, c Claim) (lease, slot bool, err error) {
	if cl, ok := s.(claimer); ok {
		return cl.claim(ctx, c)
	}
	if lease, err = s.Lock(ctx, c.Lease, c.Owner, c.TTL); err != nil || !lease {
		return lease, false, err
	}
	slot, err = s.Acquire(ctx, c.Slots, c.Holder, c.Limit, c.TTL)
	return true, slot, err
}

// ReleaseBoth gives back c's slot, then its lease: Release, then Unlock.
// What c's holder and owner do not hold is left alone.
func ReleaseBoth(ctx context.Context, s Store, c Claim) error {
	if cl, ok := s.(claimer); ok {
		return cl.unclaim(ctx, c)
	}
	return errors.Join(s.Release(ctx, c.Slots, c.Holder), s.Unlock(ctx, c.Lease, c.Owner))
}
