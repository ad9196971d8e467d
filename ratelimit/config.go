package main

// The config files, read as envoyproxy/ratelimit reads them (domain,
// descriptors with key/value/nested/wildcard values, rate_limit with unit,
// requests_per_unit, unlimited, name, replaces; shadow_mode, quota_mode,
// detailed_metric, value_to_metric, share_threshold, metadata), plus rl's
// opt-in keys (rate_limit: algorithm, limit, burst, settings; the domain:
// on_failure, local_share). Every error names its file, line and reason.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rl "github.com/rl-dev/rl/bindings/go"
	"gopkg.in/yaml.v3"
)

// maxConfigFileBytes bounds one config file (a 10,000-descriptor file is
// about 1 MB).
const maxConfigFileBytes = 64 << 20

// unitSeconds is each Envoy unit's window, as envoyproxy/ratelimit counts it
// (a month is 30 days, a year 365).
var unitSeconds = map[pb.RateLimitResponse_RateLimit_Unit]int64{
	pb.RateLimitResponse_RateLimit_SECOND: 1,
	pb.RateLimitResponse_RateLimit_MINUTE: 60,
	pb.RateLimitResponse_RateLimit_HOUR:   3600,
	pb.RateLimitResponse_RateLimit_DAY:    86400,
	pb.RateLimitResponse_RateLimit_WEEK:   7 * 86400,
	pb.RateLimitResponse_RateLimit_MONTH:  30 * 86400,
	pb.RateLimitResponse_RateLimit_YEAR:   365 * 86400,
}

// Rule is one rate_limit of the config.
type Rule struct {
	FullKey         string // domain.key_value.key: the stats key
	Domain          string
	RequestsPerUnit uint32
	Unit            pb.RateLimitResponse_RateLimit_Unit
	Unlimited       bool
	Name            string
	Replaces        []string
	ShadowMode      bool
	QuotaMode       bool
	DetailedMetric  bool
	// rl's opt-in keys: when Algorithm or Limit is set, rl decides as that
	// limiter does (rlNative); otherwise the rule counts as envoyproxy/ratelimit.
	Algorithm string
	Limit     string
	Burst     int64
	Settings  []rl.Setting // any other rl_config setting, in order
	File      string
	Line      int
	// limiter caches the rule's rl limiter (limiterSet.forRule): a config
	// is never changed once loaded, so the rule's limiter never changes.
	limiter atomic.Pointer[rl.Limiter]
}

// rlNative says the rule opted into rl's own semantics.
func (r *Rule) rlNative() bool { return r.Algorithm != "" || r.Limit != "" || len(r.Settings) > 0 }

type wildcardEntry struct {
	key   string
	parts []string
}

// descNode is one level of a domain's descriptor tree.
type descNode struct {
	children        map[string]*descNode
	wildcards       []wildcardEntry
	rule            *Rule
	valueToMetric   bool
	shareThreshold  bool
	wildcardPattern string
}

// DomainPolicy holds rl's per-domain keys.
type DomainPolicy struct {
	OnFailure  string // closed, open, local ("" = rl's default, closed)
	LocalShare string
}

// Config is every domain of one load.
type Config struct {
	domains  map[string]*descNode
	policies map[string]DomainPolicy
	rules    []*Rule
}

// ConfigError is a config fault with its place.
type ConfigError struct {
	File   string
	Line   int
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// quote bounds and escapes input quoted in a message.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}

// LoadConfigDir reads every file under dir (recursively, in name order;
// dot files skipped when ignoreDotFiles), as envoyproxy/ratelimit does.
func LoadConfigDir(dir string, ignoreDotFiles, merge bool) (*Config, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ignoreDotFiles && strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || (d.Type()&os.ModeSymlink != 0 && !d.IsDir()) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, &ConfigError{File: dir, Reason: "cannot read the config directory: " + err.Error()}
	}
	sort.Strings(files)
	c := newConfig()
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || st.IsDir() {
			continue
		}
		if st.Size() > maxConfigFileBytes {
			return nil, &ConfigError{File: f, Reason: fmt.Sprintf("file is %d bytes, more than %d", st.Size(), maxConfigFileBytes)}
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, &ConfigError{File: f, Reason: err.Error()}
		}
		if err := c.AddFile(f, data, merge); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func newConfig() *Config {
	return &Config{domains: map[string]*descNode{}, policies: map[string]DomainPolicy{}}
}

// ParseConfig reads one file's content into a config of its own.
func ParseConfig(name string, data []byte) (*Config, error) {
	c := newConfig()
	if err := c.AddFile(name, data, false); err != nil {
		return nil, err
	}
	return c, nil
}

type loader struct {
	file string
	c    *Config
}

func (l *loader) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ConfigError{File: l.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// AddFile loads one YAML file into c.
func (c *Config) AddFile(name string, data []byte, merge bool) error {
	l := &loader{file: name, c: c}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &ConfigError{File: name, Reason: "config file cannot have empty domain"}
		}
		return &ConfigError{File: name, Reason: "error loading config file: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return &ConfigError{File: name, Reason: "config file cannot have empty domain"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return l.errf(root, "the file must be a mapping with domain and descriptors")
	}
	var domain string
	var domainNode, descs *yaml.Node
	var policy DomainPolicy
	err := l.eachKey(root, func(k string, kn, v *yaml.Node) error {
		switch k {
		case "domain":
			domainNode = kn
			return l.str(v, &domain)
		case "descriptors":
			descs = v
			return nil
		case "on_failure":
			if err := l.str(v, &policy.OnFailure); err != nil {
				return err
			}
			switch policy.OnFailure {
			case "closed", "open", "local":
				return nil
			}
			return l.errf(v, "on_failure %s: must be closed, open or local", quote(policy.OnFailure))
		case "local_share":
			return l.str(v, &policy.LocalShare)
		}
		return l.errf(kn, "config error, unknown key %s", quote(k))
	})
	if err != nil {
		return err
	}
	if domain == "" {
		return l.errf(domainNode, "config file cannot have empty domain")
	}
	existing, present := c.domains[domain]
	if present && !merge {
		return l.errf(domainNode, "duplicate domain %s in config file", quote(domain))
	}
	if !present {
		existing = &descNode{children: map[string]*descNode{}}
		c.domains[domain] = existing
	}
	if policy != (DomainPolicy{}) {
		c.policies[domain] = policy
	}
	if descs == nil {
		return nil
	}
	return l.descriptors(existing, domain, domain+".", descs)
}

func (l *loader) eachKey(m *yaml.Node, f func(k string, kn, v *yaml.Node) error) error {
	if m.Kind != yaml.MappingNode {
		return l.errf(m, "expected a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, v := m.Content[i], m.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return l.errf(kn, "config error, key is not of type string")
		}
		if seen[kn.Value] {
			return l.errf(kn, "key %s given twice", quote(kn.Value))
		}
		seen[kn.Value] = true
		if err := f(kn.Value, kn, v); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) str(v *yaml.Node, out *string) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		if v.Tag == "!!null" {
			*out = ""
			return nil
		}
		return l.errf(v, "expected a string")
	}
	*out = v.Value
	return nil
}

func (l *loader) boolean(v *yaml.Node, out *bool) error {
	if v.Kind != yaml.ScalarNode || v.Decode(out) != nil {
		return l.errf(v, "expected true or false, got %s", quote(v.Value))
	}
	return nil
}

func (l *loader) descriptors(parent *descNode, domain, parentKey string, seq *yaml.Node) error {
	if seq.Tag == "!!null" {
		return nil
	}
	if seq.Kind != yaml.SequenceNode {
		return l.errf(seq, "descriptors must be a list")
	}
	for _, d := range seq.Content {
		if d.Kind != yaml.MappingNode {
			return l.errf(d, "config error, yaml file contains list of type other than map")
		}
		var key, value string
		var rl, children *yaml.Node
		node := &descNode{children: map[string]*descNode{}}
		var shadow, quota, detailed bool
		err := l.eachKey(d, func(k string, kn, v *yaml.Node) error {
			switch k {
			case "key":
				return l.str(v, &key)
			case "value":
				return l.str(v, &value)
			case "rate_limit":
				rl = v
				return nil
			case "descriptors":
				children = v
				return nil
			case "shadow_mode":
				return l.boolean(v, &shadow)
			case "quota_mode":
				return l.boolean(v, &quota)
			case "detailed_metric":
				return l.boolean(v, &detailed)
			case "value_to_metric":
				return l.boolean(v, &node.valueToMetric)
			case "share_threshold":
				return l.boolean(v, &node.shareThreshold)
			case "metadata":
				return nil // Envoy's dynamic metadata: accepted, not sent
			}
			return l.errf(kn, "config error, unknown key %s", quote(k))
		})
		if err != nil {
			return err
		}
		if key == "" {
			return l.errf(d, "descriptor has empty key")
		}
		finalKey := key
		if value != "" {
			finalKey += "_" + value
		}
		fullKey := parentKey + finalKey
		if _, dup := parent.children[finalKey]; dup {
			return l.errf(d, "duplicate descriptor composite key %s", quote(fullKey))
		}
		if rl != nil && rl.Tag != "!!null" {
			rule, err := l.rateLimit(rl, domain, fullKey)
			if err != nil {
				return err
			}
			rule.ShadowMode, rule.QuotaMode, rule.DetailedMetric = shadow, quota, detailed
			node.rule = rule
			l.c.rules = append(l.c.rules, rule)
		}
		if node.shareThreshold {
			if !strings.Contains(finalKey, "*") {
				return l.errf(d, "share_threshold can only be used with wildcard values (containing '*'), but found key %s", quote(finalKey))
			}
			node.wildcardPattern = finalKey
		}
		if strings.Contains(finalKey, "*") {
			parent.wildcards = append(parent.wildcards, wildcardEntry{key: finalKey, parts: strings.Split(finalKey, "*")})
		}
		if children != nil {
			if err := l.descriptors(node, domain, fullKey+".", children); err != nil {
				return err
			}
		}
		parent.children[finalKey] = node
	}
	return nil
}

func (l *loader) rateLimit(m *yaml.Node, domain, fullKey string) (*Rule, error) {
	r := &Rule{FullKey: fullKey, Domain: domain, File: l.file, Line: m.Line}
	var unit string
	var unitNode *yaml.Node
	err := l.eachKey(m, func(k string, kn, v *yaml.Node) error {
		switch k {
		case "requests_per_unit":
			n, err := strconv.ParseUint(v.Value, 10, 32)
			if v.Kind != yaml.ScalarNode || err != nil {
				return l.errf(v, "requests_per_unit %s: must be a whole number from 0 to 4294967295", quote(v.Value))
			}
			r.RequestsPerUnit = uint32(n)
			return nil
		case "unit":
			unitNode = v
			return l.str(v, &unit)
		case "unlimited":
			return l.boolean(v, &r.Unlimited)
		case "name":
			return l.str(v, &r.Name)
		case "replaces":
			if v.Kind != yaml.SequenceNode {
				return l.errf(v, "replaces must be a list of {name: ...}")
			}
			for _, e := range v.Content {
				var name string
				if err := l.eachKey(e, func(k string, kn, v *yaml.Node) error {
					if k != "name" {
						return l.errf(kn, "config error, unknown key %s", quote(k))
					}
					return l.str(v, &name)
				}); err != nil {
					return err
				}
				if name == "" {
					return l.errf(e, "should not have an empty replaces entry")
				}
				r.Replaces = append(r.Replaces, name)
			}
			return nil
		case "algorithm":
			return l.str(v, &r.Algorithm)
		case "limit":
			return l.str(v, &r.Limit)
		case "settings":
			return l.eachKey(v, func(k string, kn, sv *yaml.Node) error {
				var value string
				if err := l.str(sv, &value); err != nil {
					return err
				}
				r.Settings = append(r.Settings, rl.Setting{Key: k, Value: value})
				return nil
			})
		case "burst":
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil || n < 1 {
				return l.errf(v, "burst %s: must be a whole number of at least 1", quote(v.Value))
			}
			r.Burst = n
			return nil
		}
		return l.errf(kn, "config error, unknown key %s", quote(k))
	})
	if err != nil {
		return nil, err
	}
	for _, name := range r.Replaces {
		if name == r.Name {
			return nil, l.errf(m, "replaces should not contain name of same descriptor")
		}
	}
	u, ok := pb.RateLimitResponse_RateLimit_Unit_value[strings.ToUpper(unit)]
	valid := ok && u != int32(pb.RateLimitResponse_RateLimit_UNKNOWN)
	switch {
	case r.Unlimited && valid:
		return nil, l.errf(unitNode, "should not specify rate limit unit when unlimited")
	case r.Unlimited && r.rlNative():
		return nil, l.errf(m, "unlimited takes no algorithm or limit")
	case r.Unlimited:
	case r.Limit != "" && unit != "":
		return nil, l.errf(unitNode, "give either unit and requests_per_unit or limit, not both")
	case r.Limit != "":
	case !valid:
		return nil, l.errf(unitNode, "invalid rate limit unit %s", quote(unit))
	}
	r.Unit = pb.RateLimitResponse_RateLimit_Unit(u)
	if r.rlNative() {
		if err := checkRuleLimiter(r); err != nil {
			return nil, l.errf(m, "%s", err.Error())
		}
	}
	return r, nil
}
