package rl

import (
	"context"
	"errors"
	"runtime/cgo"
	"time"
)

// AcquireWait acquires cost units of key, and while denied waits the
// RetryAfter it was told and tries again (rl_limiter_acquire_wait_start:
// the wait is a timer on rl's thread, not a parked goroutine or a blocked
// thread). ctx's deadline is rl's deadline for the whole wait and for each
// store call in it. It returns:
//   - the admitting decision, once admitted;
//   - the denial and nil error at once, when the request can never be
//     admitted (RetryAfter Never), when the wait would end after ctx's
//     deadline (no waiting in vain), or on a clock=manual store (its time
//     only moves when told, so waiting would never end);
//   - ctx.Err() when ctx is canceled while it waits (rl_wait_cancel: rl ends
//     the wait, and refunds an admission that arrives after it), or its
//     deadline passes during a store call.
func (l *Limiter) AcquireWait(ctx context.Context, key string, cost int64) (Decision, error) {
	if err := checkContext(ctx); err != nil {
		return Decision{}, err
	}
	waitUs := int64(rlMaxWaitUs) // no deadline: the longest wait rl has
	if deadline, ok := ctx.Deadline(); ok {
		waitUs = max(0, time.Until(deadline).Microseconds())
	}
	p := &pendingCall{done: make(chan callResult, 1)}
	var wait *nativeWait
	err := l.start(p, func(c *nativeLimiter, h cgo.Handle) (err error) {
		wait, err = rlLimiterAcquireWaitStart(c, key, cost, waitUs, requestTimeoutUs(ctx), h)
		return err
	})
	if err != nil {
		return Decision{}, err
	}
	defer rlWaitFree(wait) // the wait itself ends on its own
	select {
	case r := <-p.done:
		return r.decision, r.err
	case <-ctx.Done():
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The deadline is rl's too, so its answer is due now: the denial the
		// wait ended on, or a store call cut short by the deadline.
		r := <-p.done
		if r.err != nil {
			return Decision{}, ctx.Err()
		}
		return r.decision, nil
	}
	// rl ends the wait and refunds an admission nobody took, once; its
	// answer lands in p.done's buffer, unread.
	rlWaitCancel(wait)
	return Decision{}, ctx.Err()
}
