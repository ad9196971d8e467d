package rl

import "strconv"

// Algorithm names a rate-limiting algorithm (docs/algorithms.md).
type Algorithm string

const (
	GCRA          Algorithm = "gcra"
	TokenBucket   Algorithm = "token_bucket"
	SlidingLog    Algorithm = "sliding_log"
	SlidingWindow Algorithm = "sliding_window"
	FixedWindow   Algorithm = "fixed_window"
	// Suppressed admits below the limit, denies above limit *
	// hard_limit_factor, and in between admits with a probability that
	// steers the accepted rate to the limit (Settings: hard_limit_factor,
	// factor_reuse, seed; Decision.SuppressionFactor).
	Suppressed Algorithm = "suppressed"
)

// OnFailure is what a store outage (Redis unreachable or too slow) gives a
// limiter's calls: see docs/failure.md.
type OnFailure string

const (
	// FailClosed (rl's default): the call fails with the outage's error.
	FailClosed OnFailure = "closed"
	// FailOpen: the call is allowed, uncounted (Decision.Source SourceFailOpen).
	FailOpen OnFailure = "open"
	// FailLocal: an in-process limiter with Config.LocalShare of each limit
	// decides (Decision.Source SourceLocal).
	FailLocal OnFailure = "local"
)

// Config describes a limiter. Zero fields are left to rl's defaults; rl
// validates every value and names the one that is wrong.
type Config struct {
	Algorithm Algorithm // default GCRA
	Limit     string    // required: "100/1m", or several: "10/s, 1000/h"
	Burst     int64     // capacity of gcra and token_bucket; 0: the limit
	Name      string    // namespace of the limiter's keys; default "default"
	OnFailure OnFailure // what a store outage gives; default FailClosed
	// LocalShare is the share of each limit one process may admit under
	// FailLocal: "1/4" or "0.25" (default "1"; exact fractions as text).
	LocalShare string
	// Settings are further rl_config settings ("granularity", ...; see
	// rl_config_describe), applied in order after the fields above.
	Settings []Setting
}

// Setting is one rl_config key and value, both as text.
type Setting struct {
	Key, Value string
}

// settings lists every setting of c in the order rl receives them.
func (c Config) settings() []Setting {
	var out []Setting
	add := func(key, value string) {
		if value != "" {
			out = append(out, Setting{key, value})
		}
	}
	add("algorithm", string(c.Algorithm))
	add("limit", c.Limit)
	if c.Burst != 0 {
		add("burst", strconv.FormatInt(c.Burst, 10))
	}
	add("name", c.Name)
	add("on_failure", string(c.OnFailure))
	add("local_share", c.LocalShare)
	return append(out, c.Settings...)
}

// newConfig builds the rl config of c; the caller frees it (rlConfigFree).
func (c Config) newConfig() (*nativeConfig, error) {
	cfg := rlConfigNew()
	if cfg == nil {
		return nil, newError(StatusNoMemory, "config: out of memory")
	}
	for _, s := range c.settings() {
		if err := setConfig(cfg, s); err != nil {
			rlConfigFree(cfg)
			return nil, err
		}
	}
	return cfg, nil
}

func setConfig(cfg *nativeConfig, s Setting) error {
	if err := checkCString(s.Key, "setting key"); err != nil {
		return err
	}
	if err := checkCString(s.Value, s.Key); err != nil {
		return err
	}
	return rlConfigSet(cfg, s.Key, s.Value)
}

// checkCString refuses text that C would silently cut at a NUL byte
// (librl's rule: rl_text_check).
func checkCString(text, what string) error {
	return rlTextCheck(text, what)
}
