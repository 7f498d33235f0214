package slack

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
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
	b := &Bot{state: st, owner: "replica-a", leaseTTL: ttl, patience: time.Second, log: zap.NewNop(),
		threads: map[string]chan struct{}{}, cfg: config.Slack{MaxConcurrentSessions: 1}}
	r := &run{b: b, id: "session-1", req: request{channel: "C1", threadTS: "1.0"}}
	unlock, slotted := b.lockThread(ctx, r)
	defer unlock()
	if !slotted {
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
