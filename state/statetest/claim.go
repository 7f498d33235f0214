package statetest

import (
	"testing"

	"github.com/slackbot/slackbot/state"
)

// claim is a session's claim on thread C1/1.0 and a slot of "sessions".
func claim(who string, limit int) state.Claim {
	return state.Claim{Lease: "lease:C1/1.0", Owner: who, Slots: "sessions", Holder: who, Limit: limit, TTL: long}
}

var claimTests = []test{
	{"a claim takes the lease and a slot and its release gives both back", func(t *testing.T, s state.Store) {
		lease, slot, err := state.ClaimBoth(ctx, s, claim("a", 1))
		if err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth on a free thread = %v, %v, %v; want both", lease, slot, err)
		}
		if truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long)) {
			t.Fatal("another owner took a claimed lease")
		}
		if truth(t)(s.Acquire(ctx, "sessions", "b", 1, long)) {
			t.Fatal("another holder took the claimed slot")
		}
		if err := state.ReleaseBoth(ctx, s, claim("a", 1)); err != nil {
			t.Fatal(err)
		}
		if !truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long)) {
			t.Fatal("a released claim kept its lease")
		}
		if !truth(t)(s.Acquire(ctx, "sessions", "b", 1, long)) {
			t.Fatal("a released claim kept its slot")
		}
	}},
	{"a claim on a thread another holds takes no slot", func(t *testing.T, s state.Store) {
		truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long))
		lease, slot, err := state.ClaimBoth(ctx, s, claim("a", 1))
		if err != nil || lease || slot {
			t.Fatalf("ClaimBoth on a held thread = %v, %v, %v; want neither", lease, slot, err)
		}
		if !truth(t)(s.Acquire(ctx, "sessions", "c", 1, long)) {
			t.Fatal("a claim that got no lease holds the only slot")
		}
	}},
	{"a claim when every slot is held keeps the lease and renews it later", func(t *testing.T, s state.Store) {
		truth(t)(s.Acquire(ctx, "sessions", "b", 1, long))
		lease, slot, err := state.ClaimBoth(ctx, s, claim("a", 1))
		if err != nil || !lease || slot {
			t.Fatalf("ClaimBoth with no slot free = %v, %v, %v; want the lease alone", lease, slot, err)
		}
		if truth(t)(s.Lock(ctx, "lease:C1/1.0", "c", long)) {
			t.Fatal("a claim waiting for a slot lost its lease")
		}
		if err := s.Release(ctx, "sessions", "b"); err != nil {
			t.Fatal(err)
		}
		lease, slot, err = state.ClaimBoth(ctx, s, claim("a", 1))
		if err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth again, a slot free = %v, %v, %v; want both", lease, slot, err)
		}
	}},
	{"releasing a claim leaves what others hold", func(t *testing.T, s state.Store) {
		truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long))
		truth(t)(s.Acquire(ctx, "sessions", "b", 1, long))
		if err := state.ReleaseBoth(ctx, s, claim("a", 1)); err != nil {
			t.Fatal(err)
		}
		if truth(t)(s.Lock(ctx, "lease:C1/1.0", "a", long)) {
			t.Fatal("releasing a's claim freed b's lease")
		}
		if truth(t)(s.Acquire(ctx, "sessions", "a", 1, long)) {
			t.Fatal("releasing a's claim freed b's slot")
		}
	}},
	{"a claim expires after its TTL", func(t *testing.T, s state.Store) {
		c := claim("dead replica", 1)
		c.TTL = short
		if lease, slot, err := state.ClaimBoth(ctx, s, c); err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth = %v, %v, %v", lease, slot, err)
		}
		eventually(t, 2*short, "the claim's lease and slot never expired", func() bool {
			return truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long)) && truth(t)(s.Acquire(ctx, "sessions", "b", 1, long))
		})
	}},
}
