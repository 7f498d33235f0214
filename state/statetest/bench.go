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
// slot, then give both back. It runs in parallel so a shared backend's
// contention shows; open is called once. Besides the mean it reports the
// 50th and 99th percentiles of one session's round ("p50-µs", "p99-µs").
func Bench(b *testing.B, open func(b *testing.B) state.Store) {
	s := open(b)
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
			ev, thread, owner := fmt.Sprint("ev", i), fmt.Sprint("lease:C1/", i), fmt.Sprint("replica", i)
			if _, err := s.Once(ctx, ev, time.Hour); err != nil {
				b.Error(err)
				return
			}
			if _, err := s.Lock(ctx, thread, owner, time.Minute); err != nil {
				b.Error(err)
				return
			}
			// A high limit: the benchmark measures the operation, not waiting.
			if _, err := s.Acquire(ctx, "sessions", owner, 1<<20, time.Minute); err != nil {
				b.Error(err)
				return
			}
			if err := s.Release(ctx, "sessions", owner); err != nil {
				b.Error(err)
				return
			}
			if err := s.Unlock(ctx, thread, owner); err != nil {
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
