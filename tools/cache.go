package tools

import (
	"sync"
	"time"
)

// Default bounds of the response cache.
const (
	defaultCacheEntries = 1024
	defaultCacheBytes   = 16 << 20
)

// resultCache keeps successful results for their tool's TTL, least
// recently used first out when it holds more entries or bytes than its
// bounds. The key is the tool and its arguments in canonical JSON. Entries
// form their own recency list, so a put costs one allocation.
type resultCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	byKey      map[string]*cached
	head       cached // sentinel: head.next is the most recently used
	now        func() time.Time
}

type cached struct {
	key        string
	content    string
	expires    time.Time
	prev, next *cached
}

func newResultCache(entries, bytes int, now func() time.Time) *resultCache {
	if entries <= 0 {
		entries = defaultCacheEntries
	}
	if bytes <= 0 {
		bytes = defaultCacheBytes
	}
	c := &resultCache{maxEntries: entries, maxBytes: bytes, byKey: map[string]*cached{}, now: now}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

func (c *resultCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return "", false
	}
	if !c.now().Before(e.expires) {
		c.remove(e)
		return "", false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.content, true
}

func (c *resultCache) put(key, content string, ttl time.Duration) {
	size := len(key) + len(content)
	if size > c.maxBytes {
		return // would evict everything else and still not fit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byKey[key]; ok {
		c.remove(old)
	}
	e := &cached{key: key, content: content, expires: c.now().Add(ttl)}
	c.byKey[key] = e
	c.pushFront(e)
	c.bytes += size
	for len(c.byKey) > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.head.prev)
	}
}

func (c *resultCache) pushFront(e *cached) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}

func (c *resultCache) unlink(e *cached) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *resultCache) remove(e *cached) {
	c.unlink(e)
	delete(c.byKey, e.key)
	c.bytes -= len(e.key) + len(e.content)
}

// CacheStats is the response cache's size.
type CacheStats struct {
	Entries int
	Bytes   int
}

// CacheStats reports how much the response cache holds.
func (o *Orchestrator) CacheStats() CacheStats {
	o.cache.mu.Lock()
	defer o.cache.mu.Unlock()
	return CacheStats{Entries: len(o.cache.byKey), Bytes: o.cache.bytes}
}
