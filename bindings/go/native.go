package rl

// The native layer: the package's only cgo calls. Each function maps one
// rl_* function of rl.h (or one helper of shim.c, which builds an
// rl_request on the C side) to Go types and opaque handles, and does the C
// side's chores once: C strings made and freed, structs set up with their
// rl_*_init function, a returned rl_error turned into an *Error and freed.
// Every other file of the package calls these and never C.

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// Opaque handles of rl's objects.
type (
	nativeStore   = C.rl_store
	nativeLimiter = C.rl_limiter
	nativeConfig  = C.rl_config
	nativeWait    = C.rl_wait
)

// Constants of rl.h the package uses.
const (
	rlMaxWaitUs       = C.RL_MAX_WAIT_US
	rlSourceCount     = C.RL_SOURCE_COUNT
	rlStatusCount     = C.RL_STATUS_COUNT
	rlSourceStore     = C.RL_SOURCE_STORE
	rlSourceFailOpen  = C.RL_SOURCE_FAIL_OPEN
	rlSourceLocal     = C.RL_SOURCE_LOCAL
	rlSourceDenyCache = C.RL_SOURCE_DENY_CACHE
	rlBreakerClosed   = C.RL_BREAKER_CLOSED
	rlBreakerOpen     = C.RL_BREAKER_OPEN
	rlBreakerHalfOpen = C.RL_BREAKER_HALF_OPEN
)

// op is an rl_op: the operations of rl_limiter_call_async.
type op C.int

const (
	opAcquire op = C.RL_OP_ACQUIRE
	opPeek    op = C.RL_OP_PEEK
	opRefund  op = C.RL_OP_REFUND
	opReset   op = C.RL_OP_RESET
)

// Errors.

// errorOf copies a C error that rl still owns (a completion's argument).
func errorOf(status C.int, err *C.rl_error) *Error {
	return newError(Status(status), C.GoString(C.rl_error_message(err)))
}

// takeError copies and frees a C error returned to us by a call.
func takeError(status C.rl_status, err *C.rl_error) *Error {
	defer C.rl_error_free(err)
	return errorOf(C.int(status), err)
}

// errorIf is nil when status is RL_OK, else err taken (takeError).
func errorIf(status C.rl_status, err *C.rl_error) error {
	if status == C.RL_OK {
		return nil
	}
	return takeError(status, err)
}

// Names and descriptions of rl's enums ("" with false: a value this librl
// does not know).

func rlStatusName(s int) string { return C.GoString(C.rl_status_name(C.int(s))) }

func rlStatusDescription(s int) (string, bool) {
	return goStringOrNil(C.rl_status_description(C.int(s)))
}

func rlStatusIsOutage(s int) bool { return C.rl_status_is_outage(C.int(s)) != 0 }

func rlSourceName(s int) (string, bool) { return goStringOrNil(C.rl_source_name(C.int(s))) }

func rlBreakerStateName(b int) (string, bool) {
	return goStringOrNil(C.rl_breaker_state_name(C.int(b)))
}

func goStringOrNil(s *C.char) (string, bool) {
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

// rlTextCheck refuses text that C would cut at a NUL byte; what names it.
func rlTextCheck(text, what string) error {
	cwhat := C.CString(what)
	defer C.free(unsafe.Pointer(cwhat))
	var cerr *C.rl_error
	return errorIf(C.rl_text_check(cKey(text), C.size_t(len(text)), cwhat, &cerr), cerr)
}

// Settings.

// settingDescription is an rl_setting_info: "" with has* false for NULL.
type settingDescription struct {
	name, scope, kind, description string
	choices, defaultValue          string
	hasChoices, hasDefault         bool
	rangeMin, rangeMax             int64
	secret                         bool
}

// rlSettingDescribe describes setting i of rl's table; false past the last.
func rlSettingDescribe(i int) (settingDescription, bool) {
	var info C.rl_setting_info
	C.rl_setting_info_init(&info, C.RL_SETTING_INFO_VERSION, nil) // RL_SETTING_INFO_INIT
	var cerr *C.rl_error
	if C.rl_setting_describe(C.size_t(i), &info, &cerr) != C.RL_OK {
		C.rl_error_free(cerr) // past the last setting
		return settingDescription{}, false
	}
	d := settingDescription{
		name:        C.GoString(info.name),
		scope:       C.GoString(info.scope),
		kind:        C.GoString(info.kind),
		description: C.GoString(info.description),
		rangeMin:    int64(info.range_min),
		rangeMax:    int64(info.range_max),
		secret:      info.secret != 0,
	}
	d.choices, d.hasChoices = goStringOrNil(info.choices)
	d.defaultValue, d.hasDefault = goStringOrNil(info.default_value)
	return d, true
}

// Configs.

// rlConfigNew makes an empty rl_config; nil when out of memory.
func rlConfigNew() *nativeConfig { return C.rl_config_new() }

func rlConfigFree(cfg *nativeConfig) { C.rl_config_free(cfg) }

func rlConfigSet(cfg *nativeConfig, key, value string) error {
	ckey, cvalue := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(ckey))
	defer C.free(unsafe.Pointer(cvalue))
	var cerr *C.rl_error
	return errorIf(C.rl_config_set(cfg, ckey, cvalue, &cerr), cerr)
}

// Stores.

func rlStoreOpen(url string) (*nativeStore, error) {
	curl := C.CString(url)
	defer C.free(unsafe.Pointer(curl))
	var c *C.rl_store
	var cerr *C.rl_error
	if st := C.rl_store_open(curl, nil, &c, &cerr); st != C.RL_OK {
		return nil, takeError(st, cerr)
	}
	return c, nil
}

func rlStoreFree(c *nativeStore) { C.rl_store_free(c) }

func rlStoreDisplayURL(c *nativeStore) string { return C.GoString(C.rl_store_display_url(c)) }

// storeDescription is an rl_store_info ("" for a NULL text).
type storeDescription struct {
	scheme                string
	inProcess, manual     bool
	scriptMode, luaMode   string // "" for memory://
	moduleNodes, luaNodes int
}

func rlStoreDescribe(c *nativeStore) (storeDescription, error) {
	var info C.rl_store_info
	C.rl_store_info_init(&info, C.RL_STORE_INFO_VERSION, nil) // RL_STORE_INFO_INIT
	var cerr *C.rl_error
	if st := C.rl_store_describe(c, &info, &cerr); st != C.RL_OK {
		return storeDescription{}, takeError(st, cerr)
	}
	d := storeDescription{
		scheme:    C.GoString(info.scheme),
		inProcess: info.in_process != 0,
		manual:    info.manual_clock != 0,
	}
	if info.script_mode != nil {
		d.scriptMode = C.GoString(info.script_mode)
		d.luaMode = C.GoString(info.lua_mode)
		d.moduleNodes = int(info.module_nodes)
		d.luaNodes = int(info.lua_nodes)
	}
	return d, nil
}

func rlStoreClockSet(c *nativeStore, us int64) error {
	var cerr *C.rl_error
	return errorIf(C.rl_store_clock_set(c, C.int64_t(us), &cerr), cerr)
}

func rlStoreClockAdvance(c *nativeStore, us int64) error {
	var cerr *C.rl_error
	return errorIf(C.rl_store_clock_advance(c, C.int64_t(us), &cerr), cerr)
}

// storeStats is an rl_store_stats: allowed and denied indexed by source,
// failures by status, durations in microseconds.
type storeStats struct {
	breakerState               int
	breakerOpened              uint64
	allowed, denied, failures  []uint64
	roundTrips                 uint64
	p50Us, p95Us, p99Us, maxUs int64
	// leases_taken, lease_units_leased, _unused, _returned, lease_decisions
	leases [5]uint64
}

func rlStoreGetStats(c *nativeStore) (storeStats, error) {
	var s C.rl_store_stats
	C.rl_store_stats_init(&s, C.RL_STORE_STATS_VERSION, nil) // RL_STORE_STATS_INIT
	var cerr *C.rl_error
	if st := C.rl_store_get_stats(c, &s, &cerr); st != C.RL_OK {
		return storeStats{}, takeError(st, cerr)
	}
	counts := func(c []C.uint64_t) []uint64 {
		out := make([]uint64, len(c))
		for i, n := range c {
			out[i] = uint64(n)
		}
		return out
	}
	return storeStats{
		breakerState:  int(s.breaker_state),
		breakerOpened: uint64(s.breaker_opened),
		allowed:       counts(s.allowed[:]),
		denied:        counts(s.denied[:]),
		failures:      counts(s.failures[:]),
		roundTrips:    uint64(s.round_trips),
		p50Us:         int64(s.round_trip_p50_us),
		p95Us:         int64(s.round_trip_p95_us),
		p99Us:         int64(s.round_trip_p99_us),
		maxUs:         int64(s.round_trip_max_us),
		leases: [5]uint64{uint64(s.leases_taken), uint64(s.lease_units_leased),
			uint64(s.lease_units_unused), uint64(s.lease_units_returned), uint64(s.lease_decisions)},
	}, nil
}

// rlStoreMetrics is the Prometheus text; "" when rl has none.
func rlStoreMetrics(c *nativeStore) string {
	buf := C.rl_store_metrics(c)
	if buf == nil {
		return ""
	}
	defer C.rl_string_free(buf)
	return C.GoString(buf)
}

// Limiters.

func rlLimiterNew(store *nativeStore, cfg *nativeConfig) (*nativeLimiter, error) {
	var c *C.rl_limiter
	var cerr *C.rl_error
	if st := C.rl_limiter_new(store, cfg, &c, &cerr); st != C.RL_OK {
		return nil, takeError(st, cerr)
	}
	return c, nil
}

func rlLimiterFree(c *nativeLimiter) { C.rl_limiter_free(c) }

func rlLimiterName(c *nativeLimiter) string { return C.GoString(C.rl_limiter_name(c)) }

// rlLimiterLimits are the limits of c (there are 1 to 8).
func rlLimiterLimits(c *nativeLimiter) []Limit {
	var info [8]C.rl_limit_info
	n := int(C.rl_limiter_limits(c, &info[0], C.size_t(len(info))))
	out := make([]Limit, n)
	for i := range out {
		out[i] = Limit{
			Limit:  int64(info[i].limit),
			Window: time.Duration(info[i].window_us) * time.Microsecond,
			Burst:  int64(info[i].burst),
		}
	}
	return out
}

// rlLimiterCall is rl's synchronous call of o (rl_limiter_acquire, _peek,
// _refund, _reset) for one key, with timeoutUs as the request's deadline.
// (rlgo_call_sync may not be "#cgo noescape" nor "nocallback": rl can run
// other calls' completions, Go code, on its thread, e.g. when the store
// closes under it, and Go code may move this goroutine's stack.)
func rlLimiterCall(c *nativeLimiter, o op, key string, cost, timeoutUs int64) (Decision, error) {
	d := C.rl_decision{version: C.RL_DECISION_VERSION}
	var cerr *C.rl_error
	st := C.rlgo_call_sync(c, C.int(o), cKey(key), C.size_t(len(key)), C.int64_t(cost),
		C.int64_t(timeoutUs), &d, &cerr)
	runtime.KeepAlive(key)
	if st != C.RL_OK {
		return Decision{}, takeError(st, cerr)
	}
	return decisionOf(&d), nil
}

// rlLimiterCallAsync starts o for one key (rl_limiter_call_async); rl
// completes it into rlgoCompleteCall with h, unless this fails.
func rlLimiterCallAsync(c *nativeLimiter, o op, key string, cost, timeoutUs int64, h cgo.Handle) error {
	var cerr *C.rl_error
	return errorIf(C.rlgo_call_async(c, C.int(o), cKey(key), C.size_t(len(key)), C.int64_t(cost),
		C.int64_t(timeoutUs), C.uintptr_t(h), &cerr), cerr)
}

// rlLimiterAcquireWaitStart starts a wait (rl_limiter_acquire_wait_start)
// completing into rlgoCompleteCall with h; the wait is its handle, to
// cancel and to free.
func rlLimiterAcquireWaitStart(c *nativeLimiter, key string, cost, waitUs, timeoutUs int64, h cgo.Handle) (*nativeWait, error) {
	var wait *C.rl_wait
	var cerr *C.rl_error
	if st := C.rlgo_acquire_wait_start(c, cKey(key), C.size_t(len(key)), C.int64_t(cost),
		C.int64_t(waitUs), C.int64_t(timeoutUs), C.uintptr_t(h), &wait, &cerr); st != C.RL_OK {
		return nil, takeError(st, cerr)
	}
	return wait, nil
}

func rlWaitCancel(w *nativeWait) { C.rl_wait_cancel(w) }

func rlWaitFree(w *nativeWait) { C.rl_wait_free(w) }

// rlLimiterAcquireBatchAsync starts a batch
// (rl_limiter_acquire_batch_async_versioned) completing into
// rlgoCompleteBatch with h, each request with timeoutUs as its deadline.
func rlLimiterAcquireBatchAsync(c *nativeLimiter, requests []Request, timeoutUs int64, h cgo.Handle) error {
	var pinner runtime.Pinner
	defer pinner.Unpin()
	reqs := cRequests(requests, timeoutUs, &pinner)
	var cerr *C.rl_error
	return errorIf(C.rlgo_batch_async(c, firstRequest(reqs), C.size_t(len(reqs)), C.uintptr_t(h), &cerr), cerr)
}

// rlLimiterAcquireBatchEachAsync starts a batch with a result per request
// (rl_limiter_acquire_batch_each_async) completing into
// rlgoCompleteBatchEach with h.
func rlLimiterAcquireBatchEachAsync(c *nativeLimiter, requests []Request, timeoutUs int64, h cgo.Handle) error {
	var pinner runtime.Pinner
	defer pinner.Unpin()
	reqs := cRequests(requests, timeoutUs, &pinner)
	var cerr *C.rl_error
	return errorIf(C.rlgo_batch_each_async(c, firstRequest(reqs), C.size_t(len(reqs)), C.uintptr_t(h), &cerr), cerr)
}

// cRequests are the rl_requests of requests. The keys stay where they are:
// pinned, C may read them during the call.
func cRequests(requests []Request, timeoutUs int64, pinner *runtime.Pinner) []C.rl_request {
	reqs := make([]C.rl_request, len(requests))
	for i, r := range requests {
		reqs[i] = C.rl_request{version: C.RL_REQUEST_VERSION, key_len: C.size_t(len(r.Key)), cost: C.int64_t(r.Cost), timeout_us: C.int64_t(timeoutUs)}
		if len(r.Key) > 0 {
			key := cKey(r.Key)
			pinner.Pin(key)
			reqs[i].key = key
		}
	}
	return reqs
}

func firstRequest(reqs []C.rl_request) *C.rl_request {
	if len(reqs) == 0 {
		return nil
	}
	return &reqs[0]
}

// cKey passes the bytes of key to C without a copy: rl copies the key
// before the call returns, and the bytes hold no Go pointers.
func cKey(key string) *C.char {
	return (*C.char)(unsafe.Pointer(unsafe.StringData(key)))
}

// Decisions and headers.

func decisionOf(d *C.rl_decision) Decision {
	return Decision{
		Allowed:    d.allowed != 0,
		Limit:      int64(d.limit),
		Remaining:  int64(d.remaining),
		RetryAfter: durationOf(int64(d.retry_after_us)),
		ResetAfter: durationOf(int64(d.reset_after_us)),
		LimitIndex: int(d.limit_index),
		Source:     Source(d.source),

		SuppressionFactor: float64(d.suppression_factor),
	}
}

// headerRenderer renders the header fields of one limiter's decisions: its
// name and limits are in C memory once (freed with the renderer), and the
// field names Go strings once, so a decision is one C call and one free,
// with nothing of Go's memory passed to C (which cgo would check, and move
// to the heap) and no C string made per decision.
type headerRenderer struct {
	name   *C.char
	limits *C.rl_limit_info
	count  C.size_t
	// policy is the RateLimit-Policy value, which depends on the name and
	// limits alone: rendered once, and sent as long as librl renders the
	// same bytes (compared each time), so that a request does not make a Go
	// string of it. Empty when the name cannot be rendered.
	policy string
}

// headerNames are rl_header_name's names, by rl_header.
var headerNames = sync.OnceValue(func() (names [C.RL_HEADER_COUNT]string) {
	for i := range names {
		names[i] = C.GoString(C.rl_header_name(C.int(i)))
	}
	return names
})

func newHeaderRenderer(name string, limits []Limit) *headerRenderer {
	// +1: never a zero-size allocation, whatever malloc(0) answers.
	info := (*[1 << 20]C.rl_limit_info)(C.malloc(C.size_t(len(limits)+1) * C.size_t(unsafe.Sizeof(C.rl_limit_info{}))))
	for i, l := range limits {
		info[i] = C.rl_limit_info{limit: C.int64_t(l.Limit), window_us: C.int64_t(microseconds(l.Window)), burst: C.int64_t(l.Burst)}
	}
	r := &headerRenderer{name: C.CString(name), limits: &info[0], count: C.size_t(len(limits))}
	runtime.SetFinalizer(r, (*headerRenderer).free)
	// Any admission of limit 0 shows the policy.
	if fields, err := r.render(nil, Decision{Allowed: true, Source: SourceStore}); err == nil && len(fields) > 0 && fields[0].Name == headerNames()[C.RL_HEADER_RATELIMIT_POLICY] {
		r.policy = fields[0].Value
	}
	return r
}

func (r *headerRenderer) free() {
	C.free(unsafe.Pointer(r.name))
	C.free(unsafe.Pointer(r.limits))
}

// render appends to dst rl_headers_render of d (through shim.c), each
// field named by rl_header_name, in rl's order.
func (r *headerRenderer) render(dst []HeaderField, d Decision) ([]HeaderField, error) {
	allowed := C.int(0)
	if d.Allowed {
		allowed = 1
	}
	out := C.rlgo_headers_render(r.name, r.limits, r.count, allowed, C.int64_t(d.Remaining),
		C.int64_t(microseconds(d.RetryAfter)), C.int64_t(microseconds(d.ResetAfter)),
		C.int32_t(d.LimitIndex), C.int32_t(d.Source))
	runtime.KeepAlive(r)
	if out == nil {
		return dst, newError(StatusNoMemory, "headers: out of memory")
	}
	defer C.rlgo_rendered_free(out)
	if out.status != C.RL_OK {
		return dst, takeError(out.status, out.err)
	}
	names := headerNames()
	for i, v := range out.values {
		if v == nil {
			continue
		}
		if i == C.RL_HEADER_RATELIMIT_POLICY && r.policy != "" && cStringIs(v, r.policy) {
			dst = append(dst, HeaderField{names[i], r.policy})
			continue
		}
		dst = append(dst, HeaderField{names[i], C.GoString(v)})
	}
	return dst, nil
}

// cStringIs says whether the NUL-terminated c holds exactly s's bytes (s
// has no NUL), reading no byte of c past its NUL.
func cStringIs(c *C.char, s string) bool {
	b := unsafe.Slice((*byte)(unsafe.Pointer(c)), len(s)+1)
	for i := 0; i < len(s); i++ {
		if b[i] != s[i] {
			return false
		}
	}
	return b[len(s)] == 0
}

// Completions: rl calls these (through shim.c) on its own thread, once per
// started call, with the handle the call was started with.

//export rlgoCompleteCall
func rlgoCompleteCall(handle C.uintptr_t, status C.int, decision *C.rl_decision, err *C.rl_error) {
	if status != C.RL_OK {
		completeCall(cgo.Handle(handle), Decision{}, errorOf(status, err))
		return
	}
	completeCall(cgo.Handle(handle), decisionOf(decision), nil)
}

//export rlgoCompleteBatch
func rlgoCompleteBatch(handle C.uintptr_t, status C.int, decisions *C.rl_decision, count C.size_t, err *C.rl_error) {
	if status != C.RL_OK {
		completeBatch(cgo.Handle(handle), nil, errorOf(status, err))
		return
	}
	out := make([]Decision, count)
	for i, d := range unsafe.Slice(decisions, count) {
		out[i] = decisionOf(&d)
	}
	completeBatch(cgo.Handle(handle), out, nil)
}

//export rlgoCompleteBatchEach
func rlgoCompleteBatchEach(handle C.uintptr_t, decisions *C.rl_decision, statuses *C.rl_status, errs **C.rl_error, count C.size_t) {
	out := make([]BatchResult, count)
	ds := unsafe.Slice(decisions, count)
	es := unsafe.Slice(errs, count)
	for i, st := range unsafe.Slice(statuses, count) {
		if st != C.RL_OK {
			out[i].Err = errorOf(C.int(st), es[i])
			continue
		}
		out[i].Decision = decisionOf(&ds[i])
	}
	completeBatchEach(cgo.Handle(handle), out)
}
