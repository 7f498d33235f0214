package statetest

import (
	"testing"

	"github.com/slackbot/slackbot/state"
)

var claimOwnerTests = []test{
	{"claiming again renews the claim and extends its expiry", func(t *testing.T, s state.Store) {
		c := claim("a", 1)
		c.TTL = short
		if lease, slot, err := state.ClaimBoth(ctx, s, c); err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth = %v, %v, %v", lease, slot, err)
		}
		// A witness taken after the first claim, for as long: once it has
		// expired, so would the first claim have.
		truth(t)(s.Lock(ctx, "witness", "w", short))
		c.TTL = long
		if lease, slot, err := state.ClaimBoth(ctx, s, c); err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth again by the same owner = %v, %v, %v; want both, renewed", lease, slot, err)
		}
		eventually(t, short, "the witness lease never expired", func() bool {
			return truth(t)(s.Lock(ctx, "witness", "x", long))
		})
		if truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long)) {
			t.Fatal("the renewed lease expired with the first claim's TTL")
		}
		if truth(t)(s.Acquire(ctx, "sessions", "b", 1, long)) {
			t.Fatal("the renewed slot expired with the first claim's TTL")
		}
	}},
	{"releasing someone else's claim leaves their lease and slot", func(t *testing.T, s state.Store) {
		if lease, slot, err := state.ClaimBoth(ctx, s, claim("a", 1)); err != nil || !lease || !slot {
			t.Fatalf("ClaimBoth = %v, %v, %v", lease, slot, err)
		}
		if err := state.ReleaseBoth(ctx, s, claim("b", 1)); err != nil {
			t.Fatal(err)
		}
		if truth(t)(s.Lock(ctx, "lease:C1/1.0", "b", long)) {
			t.Fatal("b's release freed a's lease")
		}
		if truth(t)(s.Acquire(ctx, "sessions", "b", 1, long)) {
			t.Fatal("b's release freed a's slot")
		}
		if lease, slot, err := state.ClaimBoth(ctx, s, claim("a", 1)); err != nil || !lease || !slot {
			t.Fatalf("a's claim after b's release = %v, %v, %v; want both, still a's", lease, slot, err)
		}
	}},
}
