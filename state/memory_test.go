package state

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestMemory() (*Memory, *clock) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	m := NewMemory()
	m.now = c.now
	return m, c
}

func TestOnceAnswersTrueOncePerKeyUntilItExpires(t *testing.T) {
	t.Parallel()
	m, c := newTestMemory()
	ctx := context.Background()
	if ok, _ := m.Once(ctx, "Ev1", time.Hour); !ok {
		t.Fatal("a new key is not new")
	}
	if ok, _ := m.Once(ctx, "Ev1", time.Hour); ok {
		t.Fatal("a redelivered key counted as new")
	}
	c.add(time.Hour)
	if ok, _ := m.Once(ctx, "Ev1", time.Hour); !ok {
		t.Fatal("an expired key is still remembered")
	}
}

func TestOnceIsAtomicUnderConcurrency(t *testing.T) {
	t.Parallel()
	m := NewMemory()
	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := m.Once(context.Background(), "same", time.Minute); ok {
				firsts.Add(1)
			}
		}()
	}
	wg.Wait()
	if firsts.Load() != 1 {
		t.Fatalf("%d callers were told the key was new", firsts.Load())
	}
}

func TestALeaseHasOneOwnerUntilReleasedOrExpired(t *testing.T) {
	t.Parallel()
	m, c := newTestMemory()
	ctx := context.Background()
	if ok, _ := m.Lock(ctx, "thread", "a", time.Minute); !ok {
		t.Fatal("a free lease was refused")
	}
	if ok, _ := m.Lock(ctx, "thread", "b", time.Minute); ok {
		t.Fatal("a held lease was given to another owner")
	}
	if ok, _ := m.Lock(ctx, "thread", "a", time.Minute); !ok {
		t.Fatal("the owner could not renew")
	}
	_ = m.Unlock(ctx, "thread", "b") // not b's to release
	if ok, _ := m.Lock(ctx, "thread", "b", time.Minute); ok {
		t.Fatal("another owner's Unlock released the lease")
	}
	_ = m.Unlock(ctx, "thread", "a")
	if ok, _ := m.Lock(ctx, "thread", "b", time.Minute); !ok {
		t.Fatal("a released lease was refused")
	}
	c.add(time.Minute)
	if ok, _ := m.Lock(ctx, "thread", "a", time.Minute); !ok {
		t.Fatal("an expired lease was refused")
	}
}

func TestMarksExpireAndTheStoreSweepsThem(t *testing.T) {
	t.Parallel()
	m, c := newTestMemory()
	ctx := context.Background()
	_ = m.Mark(ctx, "C1/1.0", time.Hour)
	if ok, _ := m.Marked(ctx, "C1/1.0"); !ok {
		t.Fatal("a mark is not remembered")
	}
	if ok, _ := m.Marked(ctx, "C1/2.0"); ok {
		t.Fatal("an unmarked key is remembered")
	}
	c.add(2 * time.Hour)
	for i := range sweepEvery {
		_ = m.Mark(ctx, fmt.Sprint("k", i), time.Minute)
	}
	m.mu.Lock()
	n := len(m.items)
	m.mu.Unlock()
	if n != sweepEvery {
		t.Fatalf("%d keys held; the expired mark was not swept", n)
	}
}

func TestSlotsAndCountersExpireOnTheClockAndAreSwept(t *testing.T) {
	t.Parallel()
	m, c := newTestMemory()
	ctx := context.Background()
	if ok, _ := m.Acquire(ctx, "q", "a", 1, time.Minute); !ok {
		t.Fatal("a free slot was refused")
	}
	if v, _ := m.Add(ctx, "tokens", 5, time.Hour); v != 5 {
		t.Fatalf("Add = %v", v)
	}
	c.add(time.Minute)
	if ok, _ := m.Acquire(ctx, "q", "b", 1, time.Minute); !ok {
		t.Fatal("an expired slot was not given to the next holder")
	}
	if v, _ := m.Add(ctx, "tokens", 1, time.Hour); v != 6 {
		t.Fatalf("a live counter reset early: %v", v)
	}
	c.add(time.Hour)
	if v, _ := m.Get(ctx, "tokens"); v != 0 {
		t.Fatalf("an expired counter reads %v", v)
	}
	for i := range sweepEvery {
		_ = m.Mark(ctx, fmt.Sprint("k", i), time.Minute)
	}
	m.mu.Lock()
	slots, counters := len(m.slots), len(m.counters)
	m.mu.Unlock()
	if slots != 0 || counters != 0 {
		t.Fatalf("%d semaphores and %d counters held after they expired", slots, counters)
	}
}
