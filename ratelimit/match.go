package main

// Matching a request's descriptor to a rule, as envoyproxy/ratelimit
// matches: at each entry the exact key_value, then a wildcard value, then
// the key alone; a rule applies only at the descriptor's last entry.

import (
	"strings"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// Match is the rule a descriptor matched, with what names its counter and
// its metrics.
type Match struct {
	Rule     *Rule
	StatsKey string
	// SharedValues[i], when not empty, replaces entry i's value in the
	// counter's key (share_threshold: every value of a wildcard shares one
	// counter).
	SharedValues []string
}

func wildcardMatch(parts []string, value string) bool {
	if len(parts) == 1 {
		return parts[0] == value
	}
	if !strings.HasPrefix(value, parts[0]) || !strings.HasSuffix(value, parts[len(parts)-1]) {
		return false
	}
	fixed := 0
	for _, p := range parts {
		fixed += len(p)
	}
	if len(value) < fixed {
		return false
	}
	rest := value[len(parts[0]) : len(value)-len(parts[len(parts)-1])]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// Lookup finds the rule of one descriptor of domain, or nil.
func (c *Config) Lookup(domain string, d *rlv3.RateLimitDescriptor) *Match {
	root := c.domains[domain]
	if root == nil {
		return nil
	}
	children := root.children
	prev := root
	var detailed, valueToMetric strings.Builder
	detailed.WriteString(domain)
	valueToMetric.WriteString(domain)
	var shared []string
	var match *Match
	entries := d.GetEntries()
	for i, e := range entries {
		finalKey := e.GetKey() + "_" + e.GetValue()
		detailed.WriteString(".")
		detailed.WriteString(finalKey)
		next := children[finalKey]
		wildKey := ""
		if next == nil {
			for _, w := range prev.wildcards {
				if wildcardMatch(w.parts, finalKey) {
					next, wildKey = children[w.key], w.key
					break
				}
			}
		}
		usedValue := next != nil
		if next == nil {
			next = children[e.GetKey()]
		}
		valueToMetric.WriteString(".")
		if next != nil {
			if wildKey != "" && next.shareThreshold && next.wildcardPattern != "" {
				if shared == nil {
					shared = make([]string, len(entries))
				}
				shared[i] = strings.TrimPrefix(next.wildcardPattern, e.GetKey()+"_")
			}
			v := ""
			switch {
			case wildKey != "" && shared != nil && shared[i] != "":
				v = shared[i]
			case wildKey != "" && next.valueToMetric:
				v = e.GetValue()
			case wildKey != "":
				v = strings.TrimPrefix(wildKey, e.GetKey()+"_")
			case usedValue:
				v = e.GetValue()
			case next.valueToMetric:
				v = e.GetValue()
			}
			valueToMetric.WriteString(e.GetKey())
			if v != "" {
				valueToMetric.WriteString("_")
				valueToMetric.WriteString(v)
			}
		} else {
			valueToMetric.WriteString(e.GetKey())
		}
		if next != nil && next.rule != nil && i == len(entries)-1 {
			match = &Match{Rule: next.rule, StatsKey: next.rule.FullKey}
		}
		if next == nil || len(next.children) == 0 {
			break
		}
		children = next.children
		prev = next
	}
	if match == nil {
		return nil
	}
	match.SharedValues = shared
	if match.Rule.DetailedMetric {
		if shared != nil {
			var b strings.Builder
			b.WriteString(domain)
			for i, e := range entries {
				b.WriteString(".")
				b.WriteString(e.GetKey())
				switch {
				case shared[i] != "":
					b.WriteString("_" + shared[i])
				case e.GetValue() != "":
					b.WriteString("_" + e.GetValue())
				}
			}
			match.StatsKey = b.String()
		} else {
			match.StatsKey = detailed.String()
		}
	} else if k := valueToMetric.String(); k != match.StatsKey {
		match.StatsKey = k
	}
	return match
}
