package slack

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/state"
)

// A session's turn: one session per thread — this process's lock, and a
// lease in the state store that keeps other replicas out, so a follow-up
// waits for the session answering in its thread — and one of
// max_concurrent_sessions — a slot in the store, so the cap holds across
// replicas, and this process's own bound. The lease's first claim also
// takes the slot, in one trip. The admission holds both, renews them with
// everything else it holds, and gives them back at its end.

// sessionSlots names the state store's semaphore of running sessions:
// max_concurrent_sessions holds across every replica sharing the store.
const sessionSlots = "sessions"

// leasePoll is how often a session waiting for another replica's thread
// asks for the lease again.
const leasePoll = time.Second

// slotPoll is how often a queued session asks for a slot again.
const slotPoll = 200 * time.Millisecond

// takeThread holds the thread the answer goes to for the session: this process's
// lock, then the lease in the store, showing "queued" in p while another
// replica holds it. It returns false when ctx ended first. A store that
// does not answer within its patience leaves this process's lock alone in
// force; the lease is then claimed by the renewals once the store answers.
func (ad *admission) takeThread(ctx context.Context, channel, threadTS string, p display) bool {
	b := ad.b
	if threadTS == "" {
		return true
	}
	key := threadKey(channel, threadTS)
	for {
		b.mu.Lock()
		busy, held := b.threads[key]
		if !held {
			b.threads[key] = make(chan struct{})
			b.mu.Unlock()
			break
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return false
		}
	}
	c := state.Claim{Lease: "lease:" + key, Owner: b.owner, Slots: sessionSlots, Holder: ad.id,
		Limit: max(b.cfg.MaxConcurrentSessions, 1), TTL: b.leaseTTL}
	ad.mu.Lock()
	ad.thread, ad.claim = key, c
	ad.mu.Unlock()
	claimed := false // the first claim, which may take the slot too, was made
	_, err := b.guard.Await(ctx, leasePoll, func(ctx context.Context) (bool, error) {
		if claimed {
			return b.claims.lock(ctx, c.Lease, c.Owner, c.TTL)
		}
		lease, slot, err := b.claims.claim(ctx, c)
		if err == nil {
			claimed = true
			ad.mu.Lock()
			ad.withSlot = slot
			ad.mu.Unlock()
		}
		return lease, err
	}, func() {
		b.log.Info("another replica holds this thread; waiting", zap.String("thread", key))
		p.beginWith(ctx, queuedHeadline)
	})
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		b.guard.Fallback("thread lease unavailable; answering with this process's lock only", zap.String("thread", key))
	}
	// Renewed from now on: a lease not taken for the store's failure is
	// taken by a renewal once the store answers again.
	ad.mu.Lock()
	ad.leased = true
	ad.mu.Unlock()
	return true
}

// takeSlot waits for one of max_concurrent_sessions, showing "queued" in p
// while it waits: the slot in the store (unless the lease's claim took
// it), then this process's own bound, which a store that stopped answering
// leaves in force. It returns false when ctx ended first.
func (ad *admission) takeSlot(ctx context.Context, p display) bool {
	b := ad.b
	began := time.Now()
	unqueue := func() {}
	defer func() { unqueue() }()
	queued := false
	waiting := func() {
		if !queued {
			p.queued(ctx)
			queued, unqueue = true, b.metrics.SessionQueued()
		}
	}
	ad.mu.Lock()
	held := ad.withSlot
	ad.mu.Unlock()
	if !held {
		limit := max(b.cfg.MaxConcurrentSessions, 1)
		ok, err := b.guard.Await(ctx, slotPoll, func(ctx context.Context) (bool, error) {
			return b.claims.acquire(ctx, sessionSlots, ad.id, limit, b.leaseTTL)
		}, waiting)
		switch {
		case ctx.Err() != nil:
			return false
		case err != nil:
			// A store that cannot count must not stop the bot: this
			// replica's own sessions still take turns below.
			b.guard.Fallback("session slots unavailable; counting in this process only", zap.String("session", ad.id))
		case ok:
			ad.mu.Lock()
			ad.slot = true
			ad.mu.Unlock()
		}
	}
	select {
	case b.slots <- struct{}{}:
	default:
		waiting()
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	unqueue()
	ad.mu.Lock()
	ad.local, ad.landed = true, b.metrics.SessionStarted(time.Since(began))
	ad.mu.Unlock()
	return true
}
