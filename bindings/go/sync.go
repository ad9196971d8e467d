package rl

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The synchronous path: a call made on the caller's own thread with rl's
// blocking C call, where rl lets a lone caller write its request and read
// its own reply (docs/threading.md, "Synchronous calls"): no hop to rl's I/O
// thread, no completion back into Go. A blocking cgo call holds its OS
// thread until it returns, so the path is taken only where that is cheap:
//   - on an in-process store (memory://) always: a decision never waits;
//   - on Redis by a call whose ctx nothing but its deadline can end
//     (ctx.Done() is nil: context.Background(), context.WithoutCancel) and
//     that finds no other Acquire, Peek, Refund or Reset of the store's
//     limiters in flight (syncGate): the one most likely to find the
//     connection idle, and at most one per store at a time, so 10,000
//     goroutines hold one OS thread more, not 10,000.
// Every other call takes the asynchronous path (limiter.go), as before. A
// ctx that can be canceled must end the wait at once, which a blocked
// thread cannot; making the blocking call on a goroutine of its own kept
// that, but the hand-over cost more than the hop it saves (bench/go -ctx
// cancel: 20 us p50 against 19 us asynchronous and 15 us inline).
// The call's deadline is the request's (ctx's, or the store's
// timeout_ms), so it never blocks longer than an asynchronous call waits.

// syncGate is a store's count of single calls in flight on its limiters,
// synchronous or not; the call that raises it from 0 may block. Close takes
// blocking to wait for that call to be out of rl.
type syncGate struct {
	calls    atomic.Int64
	blocking sync.Mutex
}

// enterAlone counts a call and reports whether it is the only one.
func (g *syncGate) enterAlone() bool {
	return g.calls.Load() == 0 && g.calls.CompareAndSwap(0, 1)
}

func (g *syncGate) enter() { g.calls.Add(1) }
func (g *syncGate) leave() { g.calls.Add(-1) }

// waitForBlockingCall returns once no call is blocked in rl on this gate.
func (g *syncGate) waitForBlockingCall() {
	g.blocking.Lock()
	g.blocking.Unlock()
}

// syncCalls counts calls answered through the synchronous path, for tests.
var syncCalls atomic.Int64

// callAlone makes the blocking call of a lone caller on a Redis store.
func (l *Limiter) callAlone(ctx context.Context, o op, key string, cost int64) (Decision, error) {
	gate := &l.store.gate
	gate.blocking.Lock()
	d, err := l.callSync(o, key, cost, requestTimeoutUs(ctx))
	gate.blocking.Unlock()
	gate.leave()
	return d, err
}

// callSync makes rl's synchronous call on the native limiter, held (not
// locked) meanwhile, so that Limiter.Close need not wait for it.
func (l *Limiter) callSync(o op, key string, cost int64, timeoutUs int64) (Decision, error) {
	c := l.hold()
	if c == nil {
		return Decision{}, newError(StatusShutdown, "limiter: closed")
	}
	d, err := rlLimiterCall(c, o, key, cost, timeoutUs)
	l.release(c)
	runtime.KeepAlive(l)
	syncCalls.Add(1)
	return d, err
}

// DeadlineOnly is ctx without its cancelation, with its values and its
// deadline: what rlhttp and rlgrpc acquire with, so that a lone call takes
// the synchronous path above and ends by the deadline (the store's
// timeout_ms without one). A request's context is canceled when its client
// goes away, which sends every call the asynchronous way: its completion is
// a cgo callback on rl's I/O thread, whose thread keeps a P that the
// runtime's sysmon takes back while the handler goes on and hands to a new
// spinning M, about 1.5 context switches more per request outside the
// call's own time (bench/frameworks, "go"). Ending the wait when the client
// leaves saves nothing there: the acquire was sent and counts either way.
// A ctx already ended is returned as it is (a call fails with its error).
func DeadlineOnly(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	deadline, ok := ctx.Deadline()
	return deadlineOnly{context.WithoutCancel(ctx), deadline, ok}
}

// deadlineOnly's Done is nil (nothing cancels it); Deadline is its
// parent's, which the call gives the store as its own.
type deadlineOnly struct {
	context.Context
	deadline time.Time
	ok       bool
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, c.ok }
