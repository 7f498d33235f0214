package state

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Memory is a Store in this process's memory: right for one replica, and
// lost on restart. Expired keys, slots and counters are dropped as the
// store is used, so they do not grow past what is live; session records
// are kept for the life of the process.
type Memory struct {
	mu        sync.Mutex
	items     map[string]item
	slots     map[string]map[string]time.Time // name → holder → expiry
	counters  map[string]counter
	buckets   map[string]memBucket
	sessions  map[string]SessionRecord
	progress  map[string]Progress // by session
	retention retention
	now       func() time.Time
	ops       int
	closed    atomic.Bool
}

type counter struct {
	value   float64
	expires time.Time
}

// memBucket is a token bucket and when it is full again (and forgotten).
type memBucket struct {
	bucket
	expires time.Time
}

type item struct {
	owner   string
	expires time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{
		items:    map[string]item{},
		slots:    map[string]map[string]time.Time{},
		counters: map[string]counter{},
		buckets:  map[string]memBucket{},
		sessions: map[string]SessionRecord{},
		now:      time.Now,
	}
}

// NewMemoryAt returns an empty in-memory store whose clock is now, so that
// tests of what depends on its expiries and token buckets can move time
// themselves.
func NewMemoryAt(now func() time.Time) *Memory {
	m := NewMemory()
	m.now = now
	return m
}

// sweepEvery is how many writes pass between two sweeps of expired keys.
const sweepEvery = 1024

// live returns key's item when it has not expired; m.mu is held.
func (m *Memory) live(key string, now time.Time) (item, bool) {
	it, ok := m.items[key]
	if ok && !now.Before(it.expires) {
		delete(m.items, key)
		return item{}, false
	}
	return it, ok
}

// put stores an item, sweeping now and then; m.mu is held.
func (m *Memory) put(key string, it item, now time.Time) {
	m.items[key] = it
	m.wrote(now)
}

// wrote counts a write and sweeps everything expired every sweepEvery
// writes, so keys written once and never read again do not pile up;
// m.mu is held.
func (m *Memory) wrote(now time.Time) {
	if m.ops++; m.ops%sweepEvery != 0 {
		return
	}
	for k, v := range m.items {
		if !now.Before(v.expires) {
			delete(m.items, k)
		}
	}
	for k, v := range m.counters {
		if !now.Before(v.expires) {
			delete(m.counters, k)
		}
	}
	for name := range m.slots {
		m.liveSlots(name, now)
	}
	for k, b := range m.buckets {
		if !now.Before(b.expires) {
			delete(m.buckets, k)
		}
	}
}

// liveSlots drops name's expired slots and returns the rest; m.mu is held.
func (m *Memory) liveSlots(name string, now time.Time) map[string]time.Time {
	held := m.slots[name]
	for h, exp := range held {
		if !now.Before(exp) {
			delete(held, h)
		}
	}
	if len(held) == 0 {
		delete(m.slots, name)
		return nil
	}
	return held
}

// Once implements Store.
func (m *Memory) Once(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.live(key, now); ok {
		return false, nil
	}
	m.put(key, item{expires: now.Add(ttl)}, now)
	return true, nil
}

// Lock implements Store.
func (m *Memory) Lock(_ context.Context, key, owner string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if it, ok := m.live(key, now); ok && it.owner != owner {
		return false, nil
	}
	m.put(key, item{owner: owner, expires: now.Add(ttl)}, now)
	return true, nil
}

// Unlock implements Store.
func (m *Memory) Unlock(_ context.Context, key, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if it, ok := m.items[key]; ok && it.owner == owner {
		delete(m.items, key)
	}
	return nil
}

// Mark implements Store.
func (m *Memory) Mark(_ context.Context, key string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.put(key, item{expires: now.Add(ttl)}, now)
	return nil
}

// Marked implements Store.
func (m *Memory) Marked(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.live(key, m.now())
	return ok, nil
}

// Acquire implements Store.
func (m *Memory) Acquire(_ context.Context, name, holder string, limit int, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	held := m.liveSlots(name, now)
	if _, renew := held[holder]; !renew && len(held) >= limit {
		return false, nil
	}
	if held == nil {
		held = map[string]time.Time{}
		m.slots[name] = held
	}
	held[holder] = now.Add(ttl)
	m.wrote(now)
	return true, nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, name, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held := m.slots[name]; held != nil {
		delete(held, holder)
		if len(held) == 0 {
			delete(m.slots, name)
		}
	}
	return nil
}

// Add implements Store.
func (m *Memory) Add(_ context.Context, key string, delta float64, ttl time.Duration) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	c, ok := m.counters[key]
	if !ok || !now.Before(c.expires) {
		c = counter{expires: now.Add(ttl)}
	}
	c.value += delta
	m.counters[key] = c
	m.wrote(now)
	return c.value, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.counters[key]
	if !ok || !m.now().Before(c.expires) {
		return 0, nil
	}
	return c.value, nil
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	keep, err := checkBucket(key, rate, burst, keep)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	old, ok := m.buckets[key]
	b, wait := old.bucket.take(ok, now, rate, burst, keep)
	if wait == 0 {
		m.buckets[key] = memBucket{bucket: b, expires: b.full(rate, burst)}
		m.wrote(now)
	}
	return wait, nil
}

// PutSession implements Store.
func (m *Memory) PutSession(_ context.Context, r SessionRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.Approvals = slices.Clone(r.Approvals)
	m.sessions[r.ID] = r
	m.forgetOld(m.now())
	return nil
}

// Session implements Store.
func (m *Memory) Session(_ context.Context, id string) (SessionRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions[id]
	if ok && m.retention.old(r.Started, m.now()) {
		return SessionRecord{}, false, nil
	}
	return r, ok, nil
}

// Sessions implements Store. It scans every record, which is fine for the
// few a single process keeps; SQLite and Redis index them.
func (m *Memory) Sessions(_ context.Context, f SessionFilter) ([]SessionRecord, error) {
	m.mu.Lock()
	out := make([]SessionRecord, 0, len(m.sessions))
	now := m.now()
	for _, r := range m.sessions {
		if !m.retention.old(r.Started, now) && (f.User == "" || r.User == f.User) &&
			(f.Channel == "" || r.Channel == f.Channel) &&
			!r.Started.Before(f.Since) {
			out = append(out, r)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b SessionRecord) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), f.limit())], nil
}

// SetFeedback implements Store.
func (m *Memory) SetFeedback(_ context.Context, id string, f Feedback) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sessions[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	r.Feedback = mergeFeedback(r.Feedback, f)
	m.sessions[id] = r
	return nil
}

// Ping implements Store: a Memory answers until it is closed.
func (m *Memory) Ping(context.Context) error {
	if m.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Close implements Store; a Memory holds nothing to release, and only
// Ping notices that it was closed.
func (m *Memory) Close() error {
	m.closed.Store(true)
	return nil
}
