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
)

// Admission: a question the rules let through still has to fit before it
// gets a session. One person has at most slack.max_sessions_per_user
// questions running and queued together — a counting slot per person in
// the state store, so the cap holds across replicas sharing it; this
// replica has at most slack.max_queued_sessions questions waiting; and
// the question reserves its estimated usage against the daily budgets
// (quota.go). A question that does not fit is told so, politely, in an
// ephemeral message only its asker sees.

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
// in the queue (until it runs), its asker's slot and its budget
// reservation.
type admission struct {
	b        *Bot
	user     string
	holder   string // the person's slot in the store
	slotted  bool   // the store holds the slot (renewed until release)
	renewing bool   // renew runs
	quota    *reservation
	started  sync.Once
	released sync.Once
	quit     chan struct{}
	renewed  chan struct{}
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
	ad := &admission{b: b, user: req.user, holder: newSessionID(req.channel, req.ts),
		quit: make(chan struct{}), renewed: make(chan struct{})}
	ok, err := b.state.Acquire(ctx, userSlots(req.user), ad.holder, perUser, b.leaseTTL)
	b.storeResult(storeSlots, err)
	switch {
	case err != nil:
		// A store that cannot count must not stop the bot: this
		// replica's own count of the person's questions decides.
		ok = b.admissions.userCount(req.user) <= perUser
	case ok:
		ad.slotted = true
	}
	if !ok {
		ad.release()
		b.log.Info("request refused: the asker has too many questions in progress", zap.String("user", req.user),
			zap.Int("max_sessions_per_user", perUser))
		b.refuse(ctx, req, perUserRefusal(perUser))
		return nil, false
	}
	res, ok := b.reserve(ctx, req.user, req.channel, a)
	if !ok {
		ad.release()
		b.refuse(ctx, req, b.conf.Quotas.Message)
		return nil, false
	}
	ad.quota, ad.renewing = res, true
	go ad.renew(context.WithoutCancel(ctx), perUser)
	return ad, true
}

// renew keeps the person's slot alive until release: a replica that dies
// frees it within state.lease_ttl.
func (ad *admission) renew(ctx context.Context, limit int) {
	defer close(ad.renewed)
	defer ad.b.survive("the asker's slot renewal")
	if !ad.slotted {
		return
	}
	b := ad.b
	t := time.NewTicker(b.leaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ad.quit:
			return
		case <-t.C:
			_, err := b.state.Acquire(ctx, userSlots(ad.user), ad.holder, limit, b.leaseTTL)
			b.storeResult(storeSlots, err)
		}
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
// settled by spend is given back whole.
func (ad *admission) release() {
	ad.released.Do(func() {
		b := ad.b
		ad.running()
		b.admissions.leave(ad.user)
		ctx := context.WithoutCancel(b.work)
		if ad.quota != nil {
			ad.quota.settle(ctx, spent{})
		}
		if ad.renewing {
			close(ad.quit)
			<-ad.renewed
		}
		if ad.slotted {
			b.storeResult(storeSlots, b.state.Release(ctx, userSlots(ad.user), ad.holder))
		}
	})
}

// refuse tells the asker, and only them, why their question gets no
// session.
func (b *Bot) refuse(ctx context.Context, req request, text string) {
	if err := b.ephemeral(ratelimit.WithPriority(ctx, ratelimit.Note), req.channel, req.user, "", text); err != nil {
		b.log.Debug("refusal not posted", zap.Error(slackError(err)))
	}
}
