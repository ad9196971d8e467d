package rl

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"time"
	"unsafe"
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

// HeaderField is one HTTP header field of a decision.
type HeaderField struct {
	Name, Value string
}

// HeaderFields are the HTTP header fields of d for a limiter named name
// with limits (Limiter.Name, Limiter.Limits), in the order a response
// carries them: RateLimit-Policy and RateLimit (the IETF draft "RateLimit
// header fields for HTTP") and Retry-After on a denial that can be
// retried; none for a SourceFailOpen decision, which counted nothing.
// librl renders them (rl_headers_render), so every binding sends the same
// bytes; docs/http-headers.md states the rule (seconds rounded up, w and
// Retry-After at least 1, the name as a structured-field string). A name
// that cannot be quoted or a LimitIndex beyond limits is an *Error
// (StatusInvalidArgument).
func HeaderFields(name string, limits []Limit, d Decision) ([]HeaderField, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	info := make([]C.rl_limit_info, len(limits)+1) // +1: never an empty slice to index
	for i, l := range limits {
		info[i] = C.rl_limit_info{limit: C.int64_t(l.Limit), window_us: microseconds(l.Window), burst: C.int64_t(l.Burst)}
	}
	decision := C.rl_decision{
		version:        C.RL_DECISION_VERSION,
		remaining:      C.int64_t(d.Remaining),
		retry_after_us: microseconds(d.RetryAfter),
		reset_after_us: microseconds(d.ResetAfter),
		limit_index:    C.int32_t(d.LimitIndex),
		source:         C.int32_t(d.Source),
	}
	if d.Allowed {
		decision.allowed = 1
	}
	var values [C.RL_HEADER_COUNT]*C.char
	var cerr *C.rl_error
	if status := C.rl_headers_render(cname, &info[0], C.size_t(len(limits)), &decision, &values[0], C.size_t(len(values)), &cerr); status != C.RL_OK {
		return nil, takeError(status, cerr)
	}
	fields := make([]HeaderField, 0, len(values))
	for i, v := range values {
		if v != nil {
			fields = append(fields, HeaderField{C.GoString(C.rl_header_name(C.int(i))), C.GoString(v)})
			C.rl_string_free(v)
		}
	}
	return fields, nil
}

// microseconds is d in whole microseconds, rounded up (rl's durations are
// whole microseconds; Never stays -1).
func microseconds(d time.Duration) C.int64_t {
	if d < 0 {
		return -1
	}
	return C.int64_t((d + time.Microsecond - 1) / time.Microsecond)
}
