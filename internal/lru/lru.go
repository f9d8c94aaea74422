package lru

import (
	"container/list"
	"sync"
)

// Cache is a least-recently-used cache bounded by the bytes its values
// hold. Every value carries the price version it was computed from; a
// lookup with another version misses, so an asset's entries are invalid
// as soon as its prices change, on every instance, with no message
// between them. It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int // bytes
	used  int
	order *list.List // of *cacheEntry, most recent first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key     string
	version int64
	value   any
	size    int
}

// Holds reports whether a value of size bytes can be kept at all: whether
// it fits in the cache's bound.
func (c *Cache) Holds(size int) bool { return size <= c.max }

// New returns a Cache holding at most maxBytes of values.
func New(maxBytes int) *Cache {
	return &Cache{max: maxBytes, order: list.New(), byKey: make(map[string]*list.Element)}
}

// Get returns the value stored under key for version. An entry of
// another version is dropped.
func (c *Cache) Get(key string, version int64) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if e.version != version {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

// Put stores value of the given size under key for version, evicting the
// least recently used entries beyond the bound. A value larger than the
// whole cache is not stored.
func (c *Cache) Put(key string, version int64, value any, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	if size > c.max {
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, version: version, value: value, size: size})
	c.used += size
	for c.used > c.max {
		c.remove(c.order.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.used -= e.size
}

// Len returns the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
