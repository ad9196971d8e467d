package rl

import (
	"context"
	"fmt"
)

// Helpers named after go-redis/redis_rate, for code that moves from it.

// Allow acquires one unit of key.
func (l *Limiter) Allow(ctx context.Context, key string) (Decision, error) {
	return l.Acquire(ctx, key, 1)
}

// AllowN acquires n units of key, all or nothing.
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) (Decision, error) {
	return l.Acquire(ctx, key, n)
}

// AllowAtMost acquires as many units of key as are available now, up to n,
// and returns how many it got with the decision that admitted them. When
// none is left it returns 0 and a one-unit Peek's denial (its RetryAfter
// says when one unit comes back). Each acquire is atomic, so under
// contention it asks again for what the last denial says remains.
func (l *Limiter) AllowAtMost(ctx context.Context, key string, n int64) (int64, Decision, error) {
	if n < 1 {
		return 0, Decision{}, newError(StatusInvalidArgument, fmt.Sprintf("n: %d is less than 1", n))
	}
	d, err := l.Peek(ctx, key, 0)
	for err == nil {
		want := min(n, d.Remaining)
		if want <= 0 {
			d, err = l.Peek(ctx, key, 1)
			return 0, d, err
		}
		if d, err = l.Acquire(ctx, key, want); err == nil && d.Allowed {
			return want, d, nil
		}
	}
	return 0, d, err
}
