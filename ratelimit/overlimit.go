package main

// The over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES, as envoyproxy/ratelimit's
// local cache): once a descriptor of a rule without rl's keys is over its
// limit, its window's later requests are answered over the limit in process,
// without Redis, until the window ends. As there, those hits are not added
// to the Redis count (it is already over the limit: every server that reads
// it answers over too); the answers are the ones the exact count gives.

import (
	"sync"
	"time"
)

// overEntry: the window's count when it was seen over the limit, and when
// the window ends (the server's monotonic clock).
type overEntry struct {
	count uint64
	until time.Time
}

type overKey struct {
	rule *Rule // a reload makes new rules: their limits start uncached
	key  string
}

// overLimitCache is bounded by bytes: each entry is charged its key and a
// fixed overhead; when full, the ended windows go, then the whole cache.
type overLimitCache struct {
	mu      sync.Mutex
	entries map[overKey]overEntry
	bytes   int
	max     int
}

const overEntryOverhead = 96

func newOverLimitCache(maxBytes int) *overLimitCache {
	if maxBytes <= 0 {
		return nil
	}
	return &overLimitCache{entries: map[overKey]overEntry{}, max: maxBytes}
}

// get: the cached count of rule's key while its window lasts.
func (c *overLimitCache) get(r *Rule, key string, now time.Time) (uint64, bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	e, ok := c.entries[overKey{r, key}]
	c.mu.Unlock()
	if !ok || !now.Before(e.until) {
		return 0, false
	}
	return e.count, true
}

func (c *overLimitCache) put(r *Rule, key string, count uint64, until time.Time) {
	if c == nil {
		return
	}
	cost := len(key) + overEntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	k := overKey{r, key}
	if _, ok := c.entries[k]; ok {
		c.entries[k] = overEntry{count, until}
		return
	}
	if c.bytes+cost > c.max {
		now := time.Now()
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
				c.bytes -= len(k.key) + overEntryOverhead
			}
		}
		if c.bytes+cost > c.max {
			c.entries, c.bytes = map[overKey]overEntry{}, 0
		}
	}
	c.entries[k] = overEntry{count, until}
	c.bytes += cost
}
