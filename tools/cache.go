package tools

import (
	"container/list"
	"sync"
	"time"
)

// Default bounds of the response cache.
const (
	DefaultCacheEntries = 1024
	DefaultCacheBytes   = 16 << 20
)

// resultCache keeps successful results for their tool's TTL, least
// recently used first out when it holds more entries or bytes than its
// bounds. The key is the tool and its arguments in canonical JSON.
type resultCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	order      *list.List // front = most recently used; values are *cached
	byKey      map[string]*list.Element
	now        func() time.Time
}

type cached struct {
	key     string
	content string
	expires time.Time
}

func newResultCache(entries, bytes int, now func() time.Time) *resultCache {
	if entries <= 0 {
		entries = DefaultCacheEntries
	}
	if bytes <= 0 {
		bytes = DefaultCacheBytes
	}
	return &resultCache{maxEntries: entries, maxBytes: bytes, order: list.New(), byKey: map[string]*list.Element{}, now: now}
}

func (c *resultCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return "", false
	}
	v := el.Value.(*cached)
	if !c.now().Before(v.expires) {
		c.remove(el)
		return "", false
	}
	c.order.MoveToFront(el)
	return v.content, true
}

func (c *resultCache) put(key, content string, ttl time.Duration) {
	size := len(key) + len(content)
	if size > c.maxBytes {
		return // would evict everything else and still not fit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&cached{key: key, content: content, expires: c.now().Add(ttl)})
	c.bytes += size
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *resultCache) remove(el *list.Element) {
	v := c.order.Remove(el).(*cached)
	delete(c.byKey, v.key)
	c.bytes -= len(v.key) + len(v.content)
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
	return CacheStats{Entries: o.cache.order.Len(), Bytes: o.cache.bytes}
}
