package statetest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/state"
)

// Bench measures what the Slack headend asks of the store for one
// session: dedup the event, take the thread's lease and a concurrency
// slot, then give both back. "claim" does it as the headend does (Once,
// then ClaimBoth and ReleaseBoth: three steps, one round trip each to
// Redis); "separate" with one call per operation (Once, Lock, Acquire,
// Release, Unlock: five). Each runs in parallel so a shared backend's
// contention shows; open is called once per sub-benchmark. Besides the
// mean they report the 50th and 99th percentiles of one session's round
// ("p50-µs", "p99-µs").
func Bench(b *testing.B, open func(b *testing.B) state.Store) {
	b.Run("claim", func(b *testing.B) {
		bench(b, open(b), func(s state.Store, ev string, c state.Claim) error {
			if _, err := s.Once(ctx, ev, time.Hour); err != nil {
				return err
			}
			if _, _, err := state.ClaimBoth(ctx, s, c); err != nil {
				return err
			}
			return state.ReleaseBoth(ctx, s, c)
		})
	})
	b.Run("separate", func(b *testing.B) {
		bench(b, open(b), func(s state.Store, ev string, c state.Claim) error {
			if _, err := s.Once(ctx, ev, time.Hour); err != nil {
				return err
			}
			if _, err := s.Lock(ctx, c.Lease, c.Owner, c.TTL); err != nil {
				return err
			}
			if _, err := s.Acquire(ctx, c.Slots, c.Holder, c.Limit, c.TTL); err != nil {
				return err
			}
			if err := s.Release(ctx, c.Slots, c.Holder); err != nil {
				return err
			}
			return s.Unlock(ctx, c.Lease, c.Owner)
		})
	})
}

// bench runs round, one session's work, in parallel on fresh keys.
func bench(b *testing.B, s state.Store, round func(s state.Store, ev string, c state.Claim) error) {
	b.Cleanup(func() { s.Close() })
	var n atomic.Int64
	var mu sync.Mutex
	var rounds []time.Duration
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		defer func() {
			mu.Lock()
			rounds = append(rounds, mine...)
			mu.Unlock()
		}()
		for pb.Next() {
			start := time.Now()
			i := n.Add(1)
			owner := fmt.Sprint("replica", i)
			// A high limit: the benchmark measures the operation, not waiting.
			c := state.Claim{Lease: fmt.Sprint("lease:C1/", i), Owner: owner, Slots: "sessions", Holder: owner, Limit: 1 << 20, TTL: time.Minute}
			if err := round(s, fmt.Sprint("ev", i), c); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
	})
	if len(rounds) > 0 {
		slices.Sort(rounds)
		at := func(q float64) float64 {
			return float64(rounds[min(len(rounds)-1, int(q*float64(len(rounds))))].Nanoseconds()) / 1e3
		}
		b.ReportMetric(at(0.50), "p50-µs")
		b.ReportMetric(at(0.99), "p99-µs")
	}
}
