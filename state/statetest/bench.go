package statetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/state"
)

// Bench measures what the Slack headend asks of the store for one
// session: dedup the event, take the thread's lease and a concurrency
// slot, then give both back. It runs in parallel so a shared backend's
// contention shows; open is called once.
func Bench(b *testing.B, open func(b *testing.B) state.Store) {
	s := open(b)
	b.Cleanup(func() { s.Close() })
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
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
		}
	})
}
