package rl

import (
	"fmt"
	"runtime"
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
	SourceStore Source = rlSourceStore
	// SourceFailOpen: the store had an outage and OnFailure is FailOpen:
	// allowed without counting.
	SourceFailOpen Source = rlSourceFailOpen
	// SourceLocal: the store had an outage and OnFailure is FailLocal: an
	// in-process limiter decided.
	SourceLocal Source = rlSourceLocal
	// SourceDenyCache: a denial the limiter remembered (Config's
	// "deny_cache_keys" setting) answered without a store call.
	SourceDenyCache Source = rlSourceDenyCache
)

// String is the source's name as librl gives it (rl_source_name: "store",
// "fail_open", "local", "deny_cache"), which rl's metrics label them with.
func (s Source) String() string {
	if name, ok := rlSourceName(int(s)); ok {
		return name
	}
	return fmt.Sprintf("source_%d", int(s))
}

func durationOf(us int64) time.Duration {
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
	r := newHeaderRenderer(name, limits)
	defer func() {
		runtime.SetFinalizer(r, nil)
		r.free()
	}()
	return r.render(nil, d)
}

// HeaderRenderer is HeaderFields for the decisions of one limiter, with its
// name and limits prepared once: what a middleware keeps, so that each
// request is one C call (rlhttp and rlgrpc do).
type HeaderRenderer struct{ r *headerRenderer }

// NewHeaderRenderer renders the fields of a limiter named name with
// limits (Limiter.Name, Limiter.Limits).
func NewHeaderRenderer(name string, limits []Limit) *HeaderRenderer {
	return &HeaderRenderer{newHeaderRenderer(name, limits)}
}

// Fields are HeaderFields(name, limits, d).
func (h *HeaderRenderer) Fields(d Decision) ([]HeaderField, error) {
	return h.r.render(nil, d)
}

// AppendFields appends the fields of d to dst and returns it, as Fields
// would give them: with a dst of capacity 3 (var buf [3]HeaderField;
// AppendFields(buf[:0], d)) a request allocates no slice for them. On an
// error dst is returned as it was.
func (h *HeaderRenderer) AppendFields(dst []HeaderField, d Decision) ([]HeaderField, error) {
	return h.r.render(dst, d)
}

// microseconds is d in whole microseconds, rounded up (rl's durations are
// whole microseconds; Never stays -1).
func microseconds(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
