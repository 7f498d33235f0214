package slack

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
)

// Admission: a question the rules let through still has to fit before it
// gets a session, and then waits for its turn.
//
// To be admitted: one person has at most slack.max_sessions_per_user
// questions running and queued together — a counting slot per person in
// the state store, so the cap holds across replicas sharing it; this
// replica has at most slack.max_queued_sessions questions waiting; and the
// question reserves its estimated usage against the daily budgets
// (quota.go). A question that does not fit is told so, politely, in an
// ephemeral message only its asker sees.
//
// The admission then holds the question's turn too (turn.go). Everything
// it holds in the store is renewed by one goroutine every third of
// state.lease_ttl, so a replica that dies frees it within one TTL, and
// given back when the question ends. A store that does not answer within
// its patience leaves the decision to this process's own counts; a
// session already running is never stopped by the store.

// busyRefusal answers a question when this replica's queue is full.
const busyRefusal = "I'm answering a lot of questions right now; please ask again in a few minutes."

// perUserRefusal answers a person who already has limit questions in
// progress.
func perUserRefusal(limit int) string {
	if limit == 1 {
		return "You already have a question in progress; ask again when it is answered."
	}
	return fmt.Sprintf("You already have %d questions in progress; ask again when one is answered.", limit)
}

// userSlots names a person's counting slots in the state store.
func userSlots(user string) string { return "user-sessions:" + user }

// admissions is this replica's count of waiting questions, and of each
// person's questions (the cap's fallback while the store cannot count).
type admissions struct {
	mu     sync.Mutex
	queued int
	users  map[string]int
}

// enter counts a question of user in, unless the queue already holds
// limit; it reports whether it did.
func (q *admissions) enter(user string, limit int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued >= limit {
		return false
	}
	q.queued++
	if q.users == nil {
		q.users = map[string]int{}
	}
	q.users[user]++
	return true
}

// userCount is how many questions of user this replica holds.
func (q *admissions) userCount(user string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.users[user]
}

// dequeue takes a question out of the queue: it runs now.
func (q *admissions) dequeue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued--
}

// leave counts a person's question out.
func (q *admissions) leave(user string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.users[user]--; q.users[user] <= 0 {
		delete(q.users, user)
	}
}

// admission is what an admitted question holds until it ends: its place
// in the queue (until it runs), its asker's slot, its budget reservation,
// its thread and its session slot.
type admission struct {
	b       *Bot
	req     request
	id      string // the session's id: the holder of its slots
	perUser int
	quota   *reservation

	mu sync.Mutex
	// What the store holds, renewed until release.
	userSlot bool        // the person's slot
	claim    state.Claim // the thread's lease and the session's slot, once asked for
	leased   bool        // the lease is renewed: taken, or given up on for the store's failure
	withSlot bool        // the claim's slot is the session's (taken with the lease)
	slot     bool        // the session's slot, taken on its own
	lost     bool        // the lease was last found held by another replica
	// What this process holds.
	thread string // the key of the thread's lock in b.threads, "" if none
	local  bool   // one of b.slots
	landed func() // the session's end, for the metrics

	renewing          bool // renew runs
	started, released sync.Once
	quit, renewed     chan struct{}
}

// admit decides whether a question for agent a may have a session, and
// tells its asker when it may not. The caller must call release on an
// admission it gets.
func (b *Bot) admit(ctx context.Context, req request, a *config.Agent) (*admission, bool) {
	perUser := cmp.Or(b.cfg.MaxSessionsPerUser, config.DefaultMaxSessionsPerUser)
	queue := cmp.Or(b.cfg.MaxQueuedSessions, config.DefaultMaxQueuedSessions)
	if !b.admissions.enter(req.user, queue) {
		b.log.Info("request refused: the queue is full", zap.String("user", req.user), zap.Int("max_queued_sessions", queue))
		b.refuse(ctx, req, busyRefusal)
		return nil, false
	}
	ad := &admission{b: b, req: req, id: newSessionID(req.channel, req.ts), perUser: perUser,
		quit: make(chan struct{}), renewed: make(chan struct{})}
	ok, err := b.claims.acquire(ctx, userSlots(req.user), ad.id, perUser, b.leaseTTL)
	switch {
	case err != nil:
		// A store that cannot count must not stop the bot: this
		// replica's own count of the person's questions decides.
		ok = b.admissions.userCount(req.user) <= perUser
	case ok:
		ad.userSlot = true
	}
	if !ok {
		ad.release()
		b.log.Info("request refused: the asker has too many questions in progress", zap.String("user", req.user),
			zap.Int("max_sessions_per_user", perUser))
		b.refuse(ctx, req, perUserRefusal(perUser))
		return nil, false
	}
	if ad.quota, ok = b.reserve(ctx, req.user, req.channel, a); !ok {
		ad.release()
		b.refuse(ctx, req, b.conf.Quotas.Message)
		return nil, false
	}
	ad.renewing = true
	go ad.renew(context.WithoutCancel(ctx))
	return ad, true
}

// refuse tells the asker, and only them, why their question gets no
// session.
func (b *Bot) refuse(ctx context.Context, req request, text string) {
	if err := b.ephemeral(ratelimit.WithPriority(ctx, ratelimit.Note), req.channel, req.user, "", text); err != nil {
		b.log.Debug("refusal not posted", zap.Error(slackError(err)))
	}
}

// renew keeps what the admission holds in the store alive until release:
// the person's slot, the thread's lease and the session's slot.
func (ad *admission) renew(ctx context.Context) {
	defer close(ad.renewed)
	defer ad.b.survive("the admission's renewals")
	t := time.NewTicker(ad.b.leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ad.quit:
			return
		case <-t.C:
			ad.renewOnce(ctx)
		}
	}
}

// renewOnce renews everything held once. A lease found held by another
// owner (taken while this replica could not renew, in an outage longer
// than the lease) is logged, and the session goes on: its asker is
// waiting for it. The slot taken with the lease is then renewed on its
// own, so the fleet's cap keeps counting it.
func (ad *admission) renewOnce(ctx context.Context) {
	b := ad.b
	ad.mu.Lock()
	userSlot, leased, c, withSlot, slot := ad.userSlot, ad.leased, ad.claim, ad.withSlot, ad.slot
	ad.mu.Unlock()
	if userSlot {
		_, _ = b.claims.acquire(ctx, userSlots(ad.req.user), ad.id, ad.perUser, b.leaseTTL)
	}
	slotRenewed := false
	if leased {
		var held bool
		var err error
		if withSlot {
			held, _, err = b.claims.claim(ctx, c)
			slotRenewed = err == nil && held
		} else {
			held, err = b.claims.lock(ctx, c.Lease, c.Owner, c.TTL)
		}
		if err == nil {
			ad.mu.Lock()
			warn := !held && !ad.lost
			ad.lost = !held
			ad.mu.Unlock()
			if warn {
				b.log.Warn("thread lease lost to another replica; two sessions may answer in it", zap.String("thread", ad.thread))
			}
		}
	}
	if (slot || withSlot) && !slotRenewed {
		_, _ = b.claims.acquire(ctx, sessionSlots, ad.id, max(b.cfg.MaxConcurrentSessions, 1), b.leaseTTL)
	}
}

// running takes the question out of the queue: its session runs now.
func (ad *admission) running() {
	ad.started.Do(ad.b.admissions.dequeue)
}

// spend settles the budgets with what the session spent.
func (ad *admission) spend(ctx context.Context, u llm.Usage) {
	if ad.quota != nil {
		ad.quota.spend(ctx, u)
	}
}

// release gives back everything the question holds: a reservation not
// settled by spend is given back whole; the session's slot goes back with
// the thread's lease, in one trip.
func (ad *admission) release() {
	ad.released.Do(func() {
		b := ad.b
		ctx := context.WithoutCancel(b.work)
		select {
		case <-ad.quit:
		default:
			close(ad.quit)
		}
		if ad.renewing {
			<-ad.renewed
		}
		ad.mu.Lock()
		defer ad.mu.Unlock()
		if ad.landed != nil {
			ad.landed()
		}
		if ad.local {
			<-b.slots
		}
		// Given back whatever the admission believes it holds: a call
		// that took a slot just as its session was stopped leaves no trace.
		if ad.claim.Lease != "" {
			_ = b.claims.unclaim(ctx, ad.claim)
		} else {
			_ = b.claims.release(ctx, sessionSlots, ad.id)
		}
		if ad.thread != "" {
			b.mu.Lock()
			close(b.threads[ad.thread])
			delete(b.threads, ad.thread)
			b.mu.Unlock()
		}
		ad.running()
		b.admissions.leave(ad.req.user)
		if ad.quota != nil {
			ad.quota.settle(ctx, spent{})
		}
		if ad.userSlot {
			_ = b.claims.release(ctx, userSlots(ad.req.user), ad.id)
		}
	})
}
