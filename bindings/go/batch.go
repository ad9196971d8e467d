package rl

// #include "shim.h"
import "C"

import (
	"context"
	"runtime"
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

// AcquireBatch acquires every request in one round trip per store node.
// Each is decided on its own, in order: decisions[i] answers requests[i].
// If any request is malformed nothing is decided and the error names its
// index.
func (l *Limiter) AcquireBatch(ctx context.Context, requests []Request) ([]Decision, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	// The keys stay where they are: pinned, C may read them during the call.
	var pinner runtime.Pinner
	defer pinner.Unpin()
	timeoutUs := requestTimeoutUs(ctx)
	reqs := make([]C.rl_request, len(requests))
	for i, r := range requests {
		reqs[i] = C.rl_request{version: C.RL_REQUEST_VERSION, key_len: C.size_t(len(r.Key)), cost: C.int64_t(r.Cost), timeout_us: C.int64_t(timeoutUs)}
		if len(r.Key) > 0 {
			key := cKey(r.Key)
			pinner.Pin(key)
			reqs[i].key = key
		}
	}
	var first *C.rl_request
	if len(reqs) > 0 {
		first = &reqs[0]
	}
	p := &pendingBatch{done: make(chan batchResult, 1)}
	err := l.start(p, func(c *C.rl_limiter, h C.uintptr_t, cerr **C.rl_error) C.rl_status {
		return C.rlgo_batch_async(c, first, C.size_t(len(reqs)), h, cerr)
	})
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
