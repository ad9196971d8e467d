package main

// Prometheus metrics: per domain and descriptor (the stats key
// domain.key_value...) total hits, over limit, near limit, within limit and
// shadow mode, as envoyproxy/ratelimit counts them; the service's own
// counters; then rl's store metrics as rl renders them.

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxStatsKeys bounds the per-descriptor series (detailed_metric makes one
// per request value); beyond it hits count under the key "overflow".
const maxStatsKeys = 100000

type ruleStats struct {
	totalHits, overLimit, nearLimit, withinLimit, shadowMode atomic.Uint64
	overLimitWithLocalCache                                  atomic.Uint64
}

// Stats holds the server's counters.
type Stats struct {
	mu                         sync.Mutex
	rules                      map[string]*ruleStats
	serviceErrors, redisErrors atomic.Uint64
	globalShadowMode           atomic.Uint64
	configLoadSuccess          atomic.Uint64
	configLoadError            atomic.Uint64
	lastReloadFailed           atomic.Bool
	configLoadedAt             atomic.Int64
}

func newStats() *Stats { return &Stats{rules: map[string]*ruleStats{}} }

func (s *Stats) rule(key string) *ruleStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rules[key]
	if r == nil {
		if len(s.rules) >= maxStatsKeys {
			key = "overflow"
			if r = s.rules[key]; r != nil {
				return r
			}
		}
		r = &ruleStats{}
		s.rules[key] = r
	}
	return r
}

func (s *Stats) configLoaded(ok bool) {
	if ok {
		s.configLoadSuccess.Add(1)
		s.lastReloadFailed.Store(false)
		s.configLoadedAt.Store(time.Now().Unix())
	} else {
		s.configLoadError.Add(1)
		s.lastReloadFailed.Store(true)
	}
}

// labelValue escapes a Prometheus label value.
func labelValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// WriteTo writes the exposition text of the server's own metrics.
func (s *Stats) write(w io.Writer) {
	s.mu.Lock()
	keys := make([]string, 0, len(s.rules))
	for k := range s.rules {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	sort.Strings(keys)
	families := []struct {
		name, help string
		get        func(*ruleStats) uint64
	}{
		{"total_hits", "hits of the descriptor's rule", func(r *ruleStats) uint64 { return r.totalHits.Load() }},
		{"over_limit", "hits over the limit", func(r *ruleStats) uint64 { return r.overLimit.Load() }},
		{"near_limit", "hits above NEAR_LIMIT_RATIO of the limit", func(r *ruleStats) uint64 { return r.nearLimit.Load() }},
		{"within_limit", "hits within the limit", func(r *ruleStats) uint64 { return r.withinLimit.Load() }},
		{"shadow_mode", "hits over the limit let through by shadow_mode", func(r *ruleStats) uint64 { return r.shadowMode.Load() }},
		{"over_limit_with_local_cache", "hits over the limit answered by LOCAL_CACHE_SIZE_IN_BYTES's cache", func(r *ruleStats) uint64 { return r.overLimitWithLocalCache.Load() }},
	}
	for _, f := range families {
		name := "ratelimit_service_rate_limit_" + f.name
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, f.help, name)
		for _, k := range keys {
			domain, _, _ := strings.Cut(k, ".")
			s.mu.Lock()
			r := s.rules[k]
			s.mu.Unlock()
			fmt.Fprintf(w, "%s{domain=\"%s\",key=\"%s\"} %d\n", name, labelValue(domain), labelValue(k), f.get(r))
		}
	}
	one := func(name, help string, v uint64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	one("ratelimit_service_should_rate_limit_service_error", "requests refused as malformed", s.serviceErrors.Load())
	one("ratelimit_service_should_rate_limit_redis_error", "descriptors that failed in the store", s.redisErrors.Load())
	one("ratelimit_service_global_shadow_mode", "responses turned OK by SHADOW_MODE", s.globalShadowMode.Load())
	one("ratelimit_service_config_load_success", "config loads that took effect", s.configLoadSuccess.Load())
	one("ratelimit_service_config_load_error", "config loads refused", s.configLoadError.Load())
}
