package rl

// #include "shim.h"
import "C"

import (
	"fmt"
	"time"
)

// Never is the RetryAfter of a request that can never be admitted: its cost
// is above the burst. It is -1 (one negative nanosecond), never a wait.
const Never time.Duration = -1

// Decision is the answer to a request. Being denied (Allowed false) is a
// decision, not an error.
type Decision struct {
	// Allowed is true when the request was admitted and its cost recorded.
	Allowed bool
	// Limit is the limit (units per window) of the limit that decided.
	Limit int64
	// Remaining is how many more units one more request could take now.
	Remaining int64
	// RetryAfter is 0 when allowed; else the wait until the same request
	// would be admitted, or Never (-1) when it never can be.
	RetryAfter time.Duration
	// ResetAfter is the time until the key is back to its full capacity.
	ResetAfter time.Duration
	// LimitIndex is which limit decided: its index in Limiter.Limits (exact
	// even when limits share a value, as in "100/s, 100/h").
	LimitIndex int
	// Source says who decided: the store, or, during a store outage, the
	// limiter's OnFailure policy (docs/failure.md).
	Source Source
	// SuppressionFactor (algorithm "suppressed") is the share of calls
	// suppressed when this one was decided: 0 when it was admitted outright
	// (below the limit), 1 when denied outright (above the hard limit); in
	// between it was admitted with probability 1 - SuppressionFactor. 0 for
	// every other algorithm.
	SuppressionFactor float64
}

// Source is which path produced a decision (rl_source).
type Source int

const (
	// SourceStore: the store itself decided.
	SourceStore Source = C.RL_SOURCE_STORE
	// SourceFailOpen: the store had an outage and OnFailure is FailOpen:
	// allowed without counting.
	SourceFailOpen Source = C.RL_SOURCE_FAIL_OPEN
	// SourceLocal: the store had an outage and OnFailure is FailLocal: an
	// in-process limiter decided.
	SourceLocal Source = C.RL_SOURCE_LOCAL
	// SourceDenyCache: a denial the limiter remembered (Config's
	// "deny_cache_keys" setting) answered without a store call.
	SourceDenyCache Source = C.RL_SOURCE_DENY_CACHE
)

// String is the source's name as librl gives it (rl_source_name: "store",
// "fail_open", "local", "deny_cache"), which rl's metrics label them with.
func (s Source) String() string {
	if name := C.rl_source_name(C.int(s)); name != nil {
		return C.GoString(name)
	}
	return fmt.Sprintf("source_%d", int(s))
}

func decisionOf(d *C.rl_decision) Decision {
	return Decision{
		Allowed:    d.allowed != 0,
		Limit:      int64(d.limit),
		Remaining:  int64(d.remaining),
		RetryAfter: durationOf(d.retry_after_us),
		ResetAfter: durationOf(d.reset_after_us),
		LimitIndex: int(d.limit_index),
		Source:     Source(d.source),

		SuppressionFactor: float64(d.suppression_factor),
	}
}

func durationOf(us C.int64_t) time.Duration {
	if us < 0 {
		return Never
	}
	return time.Duration(us) * time.Microsecond
}
