// Package fwlimiter opens what every framework app of bench/frameworks
// limits with: the store at $RL_URL (memory:// when unset) and one gcra
// limiter whose limit no request reaches, so each limited call is a store
// round trip that admits.
package fwlimiter

import (
	"context"

	rl "github.com/rl-dev/rl/bindings/go"
)

// Open returns the store and its limiter; close the limiter, then the store.
func Open(ctx context.Context, url string) (*rl.Store, *rl.Limiter, error) {
	if url == "" {
		url = "memory://"
	}
	store, err := rl.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	lim, err := store.Limiter(rl.Config{Algorithm: rl.GCRA, Name: "bench-fw", Limit: "1000000000/1s"})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, lim, nil
}
