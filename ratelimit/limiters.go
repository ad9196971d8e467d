package main

// The mapping from a config rule to an rl limiter and key (docs/edge-server.md):
//
//   limiter name: the domain when it is 1 to 64 bytes of [A-Za-z0-9_.-],
//                 else "d-" and the first 16 hex digits of its SHA-256
//   key:          the descriptor's entries, "key=value" joined by "&", with
//                 '%', '=' and '&' percent-escaped (share_threshold: the
//                 wildcard pattern for the value); a key over 512 bytes is
//                 "sha256:" and its hex digest
//   limiter:      a rule with rl's keys (algorithm, limit, burst) is that
//                 limiter (algorithm default fixed_window, limit default
//                 requests_per_unit/unit); a rule without them counts as
//                 envoyproxy/ratelimit counts: a fixed_window limiter of
//                 countingCapacity(unit) per unit that records every hit,
//                 the server comparing the window's count with
//                 requests_per_unit.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rl "github.com/rl-dev/rl/bindings/go"
)

// countingCapacity is the limit of an envoy-counting limiter of a unit: the
// largest power of two up to 2^40 whose one-number value (window * (limit +
// 1) + count, docs/key-schema.md) stays below 2^53 until 2100, so that Redis
// counts a hit with one INCR inside rl's script or module, where a value too
// large for one number costs a GET and a SET. 2^21 per second, 2^26 per
// minute, 2^32 per hour, 2^37 per day, 2^40 from a week up. A rule of requests_per_unit at
// or above half of it counts under 2^40 (a value of two numbers).
func countingCapacity(r *Rule) int64 {
	const till2100, two53 = 4102444800, uint64(1) << 53
	secs := unitSeconds[r.Unit]
	if secs == 0 {
		return int64(1) << 40
	}
	window := uint64(till2100/secs) + 2
	c := uint64(1) << 40
	for c+1 > (two53-1)/window {
		c /= 2
	}
	if uint64(r.RequestsPerUnit) >= c/2 {
		return int64(1) << 40
	}
	return int64(c)
}

// countingCost is what an envoy-counting limiter records of hits: at most
// half its capacity. Below half, the window's count is exact; at or above
// half, over every limit the rule may have (requests_per_unit is below
// half), and it stays there: a hit it does not record (the limiter full)
// comes only after the count passed half. So every answer is the one the
// exact count gives, whatever the rule's limit is now or after a reload.
func countingCost(r *Rule, hits uint64) int64 {
	return int64(min(hits, uint64(countingCapacity(r)/2)))
}

var nameAlphabet = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// LimiterName is the rl limiter name of a domain.
func LimiterName(domain string) string {
	if nameAlphabet.MatchString(domain) {
		return domain
	}
	sum := sha256.Sum256([]byte(domain))
	return "d-" + hex.EncodeToString(sum[:8])
}

var keyEscaper = strings.NewReplacer("%", "%25", "=", "%3D", "&", "%26")

// LimiterKey is the rl key of a request's descriptor.
func LimiterKey(d *rlv3.RateLimitDescriptor, shared []string) string {
	var b strings.Builder
	for i, e := range d.GetEntries() {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(keyEscaper.Replace(e.GetKey()))
		b.WriteByte('=')
		v := e.GetValue()
		if i < len(shared) && shared[i] != "" {
			v = shared[i]
		}
		b.WriteString(keyEscaper.Replace(v))
	}
	if b.Len() > 512 || b.Len() == 0 {
		sum := sha256.Sum256([]byte(b.String()))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

// limiterConfig is the rl config of a rule in domain under policy.
func limiterConfig(r *Rule, policy DomainPolicy) rl.Config {
	cfg := rl.Config{Name: LimiterName(r.Domain), OnFailure: rl.OnFailure(policy.OnFailure), LocalShare: policy.LocalShare}
	window := fmt.Sprintf("%ds", unitSeconds[r.Unit])
	if !r.rlNative() {
		cfg.Algorithm = rl.FixedWindow
		cfg.Limit = fmt.Sprintf("%d/%s", countingCapacity(r), window)
		return cfg
	}
	cfg.Algorithm = rl.Algorithm(r.Algorithm)
	if cfg.Algorithm == "" {
		cfg.Algorithm = rl.FixedWindow
	}
	cfg.Limit = r.Limit
	if cfg.Limit == "" {
		cfg.Limit = fmt.Sprintf("%d/%s", r.RequestsPerUnit, window)
	}
	cfg.Burst = r.Burst
	cfg.Settings = r.Settings
	return cfg
}

var checkStore struct {
	once  sync.Once
	store *rl.Store
	err   error
}

// checkRuleLimiter has rl validate a rule's own limiter settings (on a
// memory store), so that a bad algorithm or limit is a config error with
// its line, not a failure at the first request.
func checkRuleLimiter(r *Rule) error {
	checkStore.once.Do(func() { checkStore.store, checkStore.err = rl.Open(bg, "memory://") })
	if checkStore.err != nil {
		return checkStore.err
	}
	probe := &Rule{Domain: "check", RequestsPerUnit: r.RequestsPerUnit, Unit: r.Unit,
		Algorithm: r.Algorithm, Limit: r.Limit, Burst: r.Burst, Settings: r.Settings}
	if probe.Limit == "" && probe.RequestsPerUnit == 0 {
		return fmt.Errorf("requests_per_unit: must be at least 1 with algorithm")
	}
	lim, err := checkStore.store.Limiter(limiterConfig(probe, DomainPolicy{}))
	if err != nil {
		if e, ok := err.(*rl.Error); ok {
			return fmt.Errorf("%s", e.Message)
		}
		return err
	}
	return lim.Close()
}

// maxLimiters bounds the limiters one server keeps.
const maxLimiters = 100000

// limiterSet holds the limiters of one store, one per distinct rl config,
// kept across reloads (a rule that did not change keeps its limiter).
type limiterSet struct {
	store *rl.Store
	mu    sync.Mutex
	byCfg map[string]*rl.Limiter
}

func newLimiterSet(store *rl.Store) *limiterSet {
	return &limiterSet{store: store, byCfg: map[string]*rl.Limiter{}}
}

// forRule is the limiter of rule r of domain policy, cached on the rule.
func (s *limiterSet) forRule(r *Rule, policy DomainPolicy) (*rl.Limiter, error) {
	if l := r.limiter.Load(); l != nil {
		return l, nil
	}
	l, err := s.get(limiterConfig(r, policy))
	if err == nil {
		r.limiter.Store(l)
	}
	return l, err
}

func (s *limiterSet) get(cfg rl.Config) (*rl.Limiter, error) {
	id := fmt.Sprintf("%q", cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.byCfg[id]; l != nil {
		return l, nil
	}
	if len(s.byCfg) >= maxLimiters {
		return nil, fmt.Errorf("more than %d distinct limits (Envoy's per-descriptor limit overrides make one each)", maxLimiters)
	}
	l, err := s.store.Limiter(cfg)
	if err != nil {
		return nil, err
	}
	s.byCfg[id] = l
	return l, nil
}
