package rl

import (
	"runtime/cgo"
	"sync/atomic"
)

// Counts of what this package holds outside the Go heap's reach: cgo
// handles of calls in flight, and native stores and limiters not yet freed.
// Tests assert that they return to zero; nothing else reads them.
var (
	liveHandles  atomic.Int64
	liveStores   atomic.Int64
	liveLimiters atomic.Int64
)

// newHandle makes the user data of one asynchronous C call.
func newHandle(v any) cgo.Handle {
	liveHandles.Add(1)
	return cgo.NewHandle(v)
}

// takeHandle returns the value of h and deletes h. Every handle is taken
// exactly once: in its completion, or right after a call that failed to
// start (the callback never runs then).
func takeHandle(h cgo.Handle) any {
	v := h.Value()
	h.Delete()
	liveHandles.Add(-1)
	return v
}
