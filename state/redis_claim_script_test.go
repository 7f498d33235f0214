package state

import (
	"context"
	"testing"
	"time"
)

func TestRedisClaimScriptRenewsItsOwnersLeaseAndSlotToTheNewTTL(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	c := Claim{Lease: "lease:C1/1.0", Owner: "a", Slots: "sessions", Holder: "a", Limit: 1, TTL: time.Minute}
	if lease, slot, err := r.claim(ctx, c); err != nil || !lease || !slot {
		t.Fatalf("claim = %v, %v, %v", lease, slot, err)
	}
	c.TTL = time.Hour
	if lease, slot, err := r.claim(ctx, c); err != nil || !lease || !slot {
		t.Fatalf("claim again by its owner = %v, %v, %v; want both", lease, slot, err)
	}
	if ttl := r.client.PTTL(ctx, r.keyKey(c.Lease)).Val(); ttl <= time.Minute {
		t.Errorf("the renewed lease expires in %v, want about an hour", ttl)
	}
	expires, err := r.client.ZScore(ctx, r.slotKey(c.Slots), c.Holder).Result()
	if err != nil {
		t.Fatal(err)
	}
	now, err := r.client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if left := time.UnixMilli(int64(expires)).Sub(now); left <= time.Minute {
		t.Errorf("the renewed slot expires in %v, want about an hour", left)
	}
	if ttl := r.client.PTTL(ctx, r.slotKey(c.Slots)).Val(); ttl <= time.Minute {
		t.Errorf("the semaphore's key expires in %v, before the renewed slot", ttl)
	}
}

func TestRedisReleaseScriptLeavesAnotherOwnersLeaseInPlace(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	a := Claim{Lease: "lease:C1/1.0", Owner: "a", Slots: "sessions", Holder: "a", Limit: 1, TTL: time.Minute}
	if lease, slot, err := r.claim(ctx, a); err != nil || !lease || !slot {
		t.Fatalf("claim = %v, %v, %v", lease, slot, err)
	}
	b := a
	b.Owner, b.Holder = "b", "b"
	if err := r.unclaim(ctx, b); err != nil {
		t.Fatal(err)
	}
	if owner := r.client.Get(ctx, r.keyKey(a.Lease)).Val(); owner != "a" {
		t.Errorf("after b's release the lease is held by %q, want a", owner)
	}
	if _, err := r.client.ZScore(ctx, r.slotKey(a.Slots), "a").Result(); err != nil {
		t.Errorf("after b's release a's slot is gone: %v", err)
	}
	if err := r.unclaim(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := r.client.Exists(ctx, r.keyKey(a.Lease)).Val(); n != 0 {
		t.Error("a's own release left its lease")
	}
}
