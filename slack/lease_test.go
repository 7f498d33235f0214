package slack

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/storeguard"
	"github.com/slackbot/slackbot/state"
)

// TestARunningSessionKeepsItsSlotWhenItsThreadLeaseIsLost takes a thread's
// lease and a session slot in one claim, hands the lease to another owner
// (as after a store outage longer than the lease), and checks for three
// lease lifetimes that the slot the session still runs in is never free.
func TestARunningSessionKeepsItsSlotWhenItsThreadLeaseIsLost(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	ctx := context.Background()
	st := state.NewMemory()
	b := &Bot{owner: "replica-a", leaseTTL: ttl, log: zap.NewNop(), work: ctx, slots: make(chan struct{}, 1),
		threads: map[string]chan struct{}{}, cfg: config.Slack{MaxConcurrentSessions: 1},
		guard: storeguard.New(storeguard.Options{Patience: time.Second})}
	b.claims = guarded{s: st, g: b.guard}
	ad := &admission{b: b, id: "session-1", req: request{user: "U1", channel: "C1", threadTS: "1.0"}, perUser: 1,
		quit: make(chan struct{}), renewed: make(chan struct{}), renewing: true}
	b.admissions.enter("U1", 1)
	go ad.renew(ctx)
	defer ad.release()
	if !ad.takeThread(ctx, "C1", "1.0", nil) || !ad.takeSlot(ctx, nil) {
		t.Fatal("an admission alone in an empty store did not get its turn")
	}
	if !ad.withSlot {
		t.Fatal("the claim took the lease but no slot")
	}
	lease := "lease:" + threadKey("C1", "1.0")
	if err := st.Unlock(ctx, lease, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Lock(ctx, lease, "replica-b", time.Hour); err != nil || !ok {
		t.Fatalf("another owner could not take the lease: %v, %v", ok, err)
	}
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 10) {
		if ok, err := st.Acquire(ctx, sessionSlots, "session-2", 1, ttl); err != nil || ok {
			t.Fatalf("another session took the only slot (%v, %v) while session-1 still runs", ok, err)
		}
	}
}
