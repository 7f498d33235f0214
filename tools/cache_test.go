package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for cache expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestTheResponseCache(t *testing.T) {
	t.Parallel()
	newCached := func(t *testing.T, o Options, call func(context.Context, Call) (Result, error)) (*Orchestrator, *funcProvider, *fakeClock) {
		clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
		o.Now = clock.Now
		p := &funcProvider{ns: "c", call: call, tools: []Tool{
			{Name: "c__cached", Schema: anyObject, CacheTTL: time.Minute},
			{Name: "c__fresh", Schema: anyObject},
		}}
		return newOrch(t, o, p), p, clock
	}
	t.Run("an identical call within the TTL is answered from the cache", func(t *testing.T) {
		o, p, clock := newCached(t, Options{}, echoArgs)
		first := o.Execute(context.Background(), "1", "c__cached", `{"b":2,"a":[1,{"y":1,"x":2}]}`, 0)
		second := o.Execute(context.Background(), "2", "c__cached", ` { "a" : [1, {"x":2,"y":1}], "b" : 2 } `, 0)
		if first.Cached || !second.Cached || second.Content != first.Content || p.calls.Load() != 1 {
			t.Fatalf("first cached=%v, second cached=%v (%q vs %q), %d calls", first.Cached, second.Cached, first.Content, second.Content, p.calls.Load())
		}
		clock.Add(time.Minute)
		if third := o.Execute(context.Background(), "3", "c__cached", `{"b":2,"a":[1,{"y":1,"x":2}]}`, 0); third.Cached || p.calls.Load() != 2 {
			t.Fatalf("an expired entry was used (cached=%v, %d calls)", third.Cached, p.calls.Load())
		}
	})
	t.Run("other arguments, and tools without a TTL, always run", func(t *testing.T) {
		o, p, _ := newCached(t, Options{}, echoArgs)
		o.Execute(context.Background(), "1", "c__cached", `{"q":1}`, 0)
		if out := o.Execute(context.Background(), "2", "c__cached", `{"q":2}`, 0); out.Cached {
			t.Fatal("different arguments shared an entry")
		}
		o.Execute(context.Background(), "3", "c__fresh", `{}`, 0)
		if out := o.Execute(context.Background(), "4", "c__fresh", `{}`, 0); out.Cached || p.calls.Load() != 4 {
			t.Fatalf("a tool without cache TTL was cached (%d calls)", p.calls.Load())
		}
	})
	t.Run("errors are never cached", func(t *testing.T) {
		fail := true
		o, p, _ := newCached(t, Options{}, func(context.Context, Call) (Result, error) {
			if fail {
				return Result{}, errors.New("down")
			}
			return Result{Content: "up"}, nil
		})
		o.Execute(context.Background(), "1", "c__cached", `{}`, 0)
		fail = false
		if out := o.Execute(context.Background(), "2", "c__cached", `{}`, 0); out.Cached || out.Content != "up" || p.calls.Load() != 2 {
			t.Fatalf("a failure was cached: %+v", out)
		}
		o2, p2, _ := newCached(t, Options{}, func(context.Context, Call) (Result, error) {
			return Result{Content: "no such file", IsError: true}, nil
		})
		o2.Execute(context.Background(), "1", "c__cached", `{}`, 0)
		if out := o2.Execute(context.Background(), "2", "c__cached", `{}`, 0); out.Cached || p2.calls.Load() != 2 {
			t.Fatal("a tool's own error result was cached")
		}
	})
	t.Run("the cache is bounded in entries and in bytes, least recently used out first", func(t *testing.T) {
		o, _, _ := newCached(t, Options{CacheEntries: 3}, echoArgs)
		for _, a := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
			o.Execute(context.Background(), "x", "c__cached", a, 0)
		}
		o.Execute(context.Background(), "x", "c__cached", `{"n":1}`, 0) // 1 is now the most recent
		o.Execute(context.Background(), "x", "c__cached", `{"n":4}`, 0) // evicts 2
		if s := o.CacheStats(); s.Entries != 3 {
			t.Fatalf("%d entries", s.Entries)
		}
		if !o.Execute(context.Background(), "x", "c__cached", `{"n":1}`, 0).Cached || o.Execute(context.Background(), "x", "c__cached", `{"n":2}`, 0).Cached {
			t.Fatal("the wrong entry was evicted")
		}

		big := strings.Repeat("x", 400)
		o2, _, _ := newCached(t, Options{CacheBytes: 1000}, func(_ context.Context, c Call) (Result, error) {
			return Result{Content: big}, nil
		})
		for _, a := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
			o2.Execute(context.Background(), "x", "c__cached", a, 0)
		}
		if s := o2.CacheStats(); s.Bytes > 1000 || s.Entries != 2 {
			t.Fatalf("cache holds %d entries, %d bytes; bound 1000 bytes", s.Entries, s.Bytes)
		}
	})
	t.Run("a cached result still goes through the size cap", func(t *testing.T) {
		o, _, _ := newCached(t, Options{MaxResultBytes: 100}, func(context.Context, Call) (Result, error) {
			return Result{Content: strings.Repeat("y", 500)}, nil
		})
		o.Execute(context.Background(), "1", "c__cached", `{}`, 0)
		out := o.Execute(context.Background(), "2", "c__cached", `{}`, 0)
		if !out.Cached || !out.Oversize || len(out.Content) > 100 {
			t.Fatalf("cached=%v oversize=%v len=%d", out.Cached, out.Oversize, len(out.Content))
		}
	})
}
