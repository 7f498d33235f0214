package state

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// commandCounter counts the commands a client sends, pipelines included.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func TestRedisTakesAndGivesBackASessionsClaimInOneCommandEach(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	c := Claim{Lease: "lease:C1/1.0", Owner: "a", Slots: "sessions", Holder: "a", Limit: 1, TTL: time.Minute}
	// Load the scripts first: the first run of a script may take a second
	// command (EVALSHA refused, then EVAL).
	if _, _, err := ClaimBoth(ctx, r, c); err != nil {
		t.Fatal(err)
	}
	if err := ReleaseBoth(ctx, r, c); err != nil {
		t.Fatal(err)
	}
	counter := &commandCounter{}
	r.client.AddHook(counter)
	if lease, slot, err := ClaimBoth(ctx, r, c); err != nil || !lease || !slot {
		t.Fatalf("ClaimBoth = %v, %v, %v", lease, slot, err)
	}
	if n := counter.n.Load(); n != 1 {
		t.Errorf("taking a claim sent %d commands, want 1", n)
	}
	if err := ReleaseBoth(ctx, r, c); err != nil {
		t.Fatal(err)
	}
	if n := counter.n.Load(); n != 2 {
		t.Errorf("taking and giving back a claim sent %d commands, want 2", n)
	}
}
