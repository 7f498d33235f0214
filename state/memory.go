package state

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: right for one replica, and
// lost on restart. Expired keys are dropped as the store is used, so it
// does not grow past what is live.
type Memory struct {
	mu    sync.Mutex
	items map[string]item
	now   func() time.Time
	ops   int
}

type item struct {
	owner   string
	expires time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{items: map[string]item{}, now: time.Now} }

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
	if m.ops++; m.ops%sweepEvery == 0 {
		for k, v := range m.items {
			if !now.Before(v.expires) {
				delete(m.items, k)
			}
		}
	}
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

// Close implements Store; a Memory holds nothing to release.
func (m *Memory) Close() error { return nil }
