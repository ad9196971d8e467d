package rl

import "runtime/cgo"

// The completions of asynchronous calls. rl runs them on its own thread,
// exactly once per started call (native.go's rlgoComplete* turn its answer
// into Go values and call these); they take (and so delete) the call's
// handle and hand the result to the waiting goroutine through its one-slot
// channel, which never blocks, so rl's thread is back at once.
//
// (A completion queue drained by a goroutine parked on an eventfd was
// measured too: same throughput at 64 goroutines, about 35us slower at one,
// since the netpoller's wake-up is one more hop than this.)

func completeCall(h cgo.Handle, d Decision, err error) {
	p := takeHandle(h).(*pendingCall)
	if p.gate != nil {
		p.gate.leave() // before the waiter runs on: its next call may find the store alone
	}
	p.done <- callResult{decision: d, err: err}
}

func completeBatch(h cgo.Handle, decisions []Decision, err error) {
	p := takeHandle(h).(*pendingBatch)
	p.done <- batchResult{decisions: decisions, err: err}
}

func completeBatchEach(h cgo.Handle, results []BatchResult) {
	p := takeHandle(h).(*pendingBatchEach)
	p.done <- results
}
