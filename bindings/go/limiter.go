package rl

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter applies one policy (algorithm, limits, name) over a store. It is
// safe for concurrent use. Keys are any bytes, 1 to 512 of them.
//
// On Redis a call runs asynchronously in rl and waits on a channel, so
// goroutines waiting on Redis park like any other goroutine instead of
// holding an OS thread each; only a call alone on its store whose ctx
// cannot be canceled, and every call on memory://, is made synchronously
// (sync.go). ctx's deadline is passed to rl as the call's own deadline
// (rl_request.timeout_us), so the store gives up by then too. If ctx ends
// first the call returns ctx.Err() at once; the reply, when it comes, is
// dropped (an acquire may still have been counted).
type Limiter struct {
	mu      sync.RWMutex   // Close takes it to clear c; calls hold it shared
	c       *nativeLimiter // nil once closed
	refs    atomic.Int64   // 1 for c itself, plus each synchronous call using it
	store   *Store         // kept reachable: dropping it would close it
	config  Config
	name    string
	limits  []Limit
	cleanup runtime.Cleanup
}

// Limit is one limit of a limiter as rl parsed it from Config.Limit and
// Config.Burst: Limit units per Window, capacity Burst.
type Limit struct {
	Limit  int64
	Window time.Duration
	Burst  int64
}

// Acquire asks for cost units of key, recording them when admitted.
func (l *Limiter) Acquire(ctx context.Context, key string, cost int64) (Decision, error) {
	return l.call(ctx, opAcquire, key, cost)
}

// Peek decides a request of cost units without recording anything; cost 0
// describes the key as it is.
func (l *Limiter) Peek(ctx context.Context, key string, cost int64) (Decision, error) {
	return l.call(ctx, opPeek, key, cost)
}

// Refund gives cost units back to key (never beyond full capacity) and
// describes the key afterwards.
func (l *Limiter) Refund(ctx context.Context, key string, cost int64) (Decision, error) {
	return l.call(ctx, opRefund, key, cost)
}

// Reset forgets all state of key: it is back to full capacity.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	_, err := l.call(ctx, opReset, key, 0)
	return err
}

// Config is the configuration the limiter was made with.
func (l *Limiter) Config() Config { return l.config }

// Name is the limiter's name as rl holds it: Config.Name, or "default".
func (l *Limiter) Name() string { return l.name }

// Limits are its limits as rl parsed them, in the order of Config.Limit.
func (l *Limiter) Limits() []Limit { return append([]Limit(nil), l.limits...) }

// Close frees the limiter. Calls in flight still complete (the native
// limiter is freed when the last synchronous one is done); later calls fail
// with ErrShutdown. Idempotent.
func (l *Limiter) Close() error {
	l.mu.Lock()
	c := l.c
	if c != nil {
		l.cleanup.Stop()
		l.c = nil
	}
	l.mu.Unlock()
	if c != nil {
		l.release(c)
	}
	return nil
}

// hold returns the native limiter, kept alive until release, or nil once
// closed.
func (l *Limiter) hold() *nativeLimiter {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.c != nil {
		l.refs.Add(1)
	}
	return l.c
}

// release lets go of c; the last one to let go frees it.
func (l *Limiter) release(c *nativeLimiter) {
	if l.refs.Add(-1) == 0 {
		freeLimiter(c)
	}
}

func freeLimiter(c *nativeLimiter) {
	rlLimiterFree(c)
	liveLimiters.Add(-1)
}

// callResult is what a completion hands to the goroutine waiting for it.
type callResult struct {
	decision Decision
	err      error
}

// pendingCall is the value behind the cgo.Handle of one call in flight.
// done has room for the one result, so the completion never blocks, even
// when nobody waits any more. gate, when set, counts the call until then.
type pendingCall struct {
	done chan callResult
	gate *syncGate
}

func (l *Limiter) call(ctx context.Context, o op, key string, cost int64) (Decision, error) {
	if err := checkContext(ctx); err != nil {
		return Decision{}, err
	}
	if l == nil {
		return Decision{}, newError(StatusInvalidArgument, "limiter: is nil")
	}
	if l.store == nil { // a Limiter{} not made by Store.Limiter: as if closed
		return Decision{}, newError(StatusShutdown, "limiter: closed")
	}
	if l.store.info.InProcess {
		return l.callSync(o, key, cost, 0)
	}
	// Reset's synchronous C call takes no deadline: it stays asynchronous.
	gate := &l.store.gate
	if o != opReset && ctx.Done() == nil && gate.enterAlone() {
		return l.callAlone(ctx, o, key, cost)
	}
	gate.enter()
	p := &pendingCall{done: make(chan callResult, 1), gate: gate}
	err := l.start(p, func(c *nativeLimiter, h cgo.Handle) error {
		return rlLimiterCallAsync(c, o, key, cost, requestTimeoutUs(ctx), h)
	})
	if err != nil {
		gate.leave()
		return Decision{}, err
	}
	select {
	case r := <-p.done:
		return r.decision, r.err
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// start makes the handle of pending and runs begin on the native limiter.
// If begin fails the callback will never run, so the handle is taken here.
func (l *Limiter) start(pending any, begin func(*nativeLimiter, cgo.Handle) error) error {
	if l == nil {
		return newError(StatusInvalidArgument, "limiter: is nil")
	}
	h := newHandle(pending)
	var err error
	l.mu.RLock()
	if l.c != nil {
		err = begin(l.c, h)
	} else {
		err = newError(StatusShutdown, "limiter: closed")
	}
	l.mu.RUnlock()
	runtime.KeepAlive(l)
	if err != nil {
		takeHandle(h)
	}
	return err
}

// requestTimeoutUs is ctx's deadline as rl_request.timeout_us, so that the
// store ends its call by it too (0: no deadline, the store's timeout_ms).
func requestTimeoutUs(ctx context.Context) int64 {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(1, time.Until(deadline).Microseconds())
}
