package rl

import (
	"context"
	"runtime/cgo"
)

// Request is one entry of a batch.
type Request struct {
	Key  string
	Cost int64
}

type batchResult struct {
	decisions []Decision
	err       error
}

// pendingBatch is the value behind the cgo.Handle of a batch in flight.
type pendingBatch struct {
	done chan batchResult
}

// BatchResult is one request's result in AcquireBatchEach: its Decision
// when Err is nil; otherwise Err is an *Error (errors.Is(r.Err,
// rl.ErrTimeout), ...) and Decision is the zero value.
type BatchResult struct {
	Decision Decision
	Err      error
}

// pendingBatchEach is the value behind the cgo.Handle of an
// AcquireBatchEach in flight.
type pendingBatchEach struct {
	done chan []BatchResult
}

// startFunc starts a batch in rl (rlLimiterAcquireBatchAsync or
// rlLimiterAcquireBatchEachAsync): the requests, each with timeoutUs as its
// deadline, and the handle of the waiting Go call.
type startFunc func(c *nativeLimiter, requests []Request, timeoutUs int64, h cgo.Handle) error

// startBatch hands requests to rl through start, with ctx's deadline as
// each request's own.
func (l *Limiter) startBatch(ctx context.Context, requests []Request, pending any, start startFunc) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	timeoutUs := requestTimeoutUs(ctx)
	return l.start(pending, func(c *nativeLimiter, h cgo.Handle) error {
		return start(c, requests, timeoutUs, h)
	})
}

// AcquireBatch acquires every request in one round trip per store node.
// Each is decided on its own, in order: decisions[i] answers requests[i].
// If any request is malformed nothing is decided and the error names its
// index. If any request fails, the error is its failure; AcquireBatchEach
// gives each request its own.
func (l *Limiter) AcquireBatch(ctx context.Context, requests []Request) ([]Decision, error) {
	p := &pendingBatch{done: make(chan batchResult, 1)}
	err := l.startBatch(ctx, requests, p, rlLimiterAcquireBatchAsync)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-p.done:
		return r.decisions, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// AcquireBatchEach acquires every request like AcquireBatch, with a result
// per request: results[i] answers requests[i], with its own decision or
// error, so that one failed request does not hide the others' decisions.
// On one store node an outage fails every request (each with that error);
// with Redis Cluster a batch is split by node, and one node can fail while
// the others answer. The error is the call's own: a malformed batch
// (nothing decided, the message names the request's index), a closed
// store, or ctx.Err() when ctx ends first.
func (l *Limiter) AcquireBatchEach(ctx context.Context, requests []Request) ([]BatchResult, error) {
	p := &pendingBatchEach{done: make(chan []BatchResult, 1)}
	err := l.startBatch(ctx, requests, p, rlLimiterAcquireBatchEachAsync)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-p.done:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
