package rl

import (
	"context"
	"time"
)

// AcquireWait acquires cost units of key, and while denied waits the
// RetryAfter it was told and tries again. It returns:
//   - the admitting decision, once admitted;
//   - the denial and nil error at once, when the request can never be
//     admitted (RetryAfter Never), when the wait would end after ctx's
//     deadline (no sleeping in vain), or on a clock=manual store (its time
//     only moves when told, so waiting would never end);
//   - the last denial and ctx.Err() when ctx ends while it waits.
//
// The wait is a timer in Go, not a blocked thread.
func (l *Limiter) AcquireWait(ctx context.Context, key string, cost int64) (Decision, error) {
	for {
		d, err := l.Acquire(ctx, key, cost)
		if err != nil || d.Allowed || d.RetryAfter == Never || l.store.manual {
			return d, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d.RetryAfter {
			return d, nil
		}
		timer := time.NewTimer(d.RetryAfter)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return d, ctx.Err()
		}
	}
}
