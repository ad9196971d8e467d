package rl

// Redis Cluster through the Go binding: the cluster of scripts/with-redis
// (RL_TEST_CLUSTER_URL, three masters); skips without it. The routing
// itself is librl's (tests/redis/cluster_test.cpp tests redirects and
// failovers); this shows a Go service gets it from the URL alone.

import (
	"context"
	"fmt"
	"os"
	"testing"
)

func TestClusterKeysOnEveryMasterDecideExactly(t *testing.T) {
	url := os.Getenv("RL_TEST_CLUSTER_URL")
	if url == "" {
		t.Skip("RL_TEST_CLUSTER_URL is not set (scripts/with-redis sets it)")
	}
	ctx := context.Background()
	s, err := Open(ctx, withQuery(url, "prefix="+uniquePrefix()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lim := newLimiter(t, s, Config{Algorithm: SlidingWindow, Limit: "5/1h"})
	var requests []Request
	for k := 0; k < 30; k++ {
		key := fmt.Sprintf("user-%d", k)
		admitted := 0
		for i := 0; i < 7; i++ {
			d, err := lim.Acquire(ctx, key, 1)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if d.Allowed {
				admitted++
			}
		}
		if admitted != 5 {
			t.Fatalf("%s: %d admitted, want 5", key, admitted)
		}
		requests = append(requests, Request{fmt.Sprintf("fresh-%d", k), 5}, Request{fmt.Sprintf("fresh-%d", k), 1})
	}
	// A batch over every master, joined in order: each fresh key's 5 pass, its 6th does not.
	ds, err := lim.AcquireBatch(ctx, requests)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if d.Allowed != (i%2 == 0) {
			t.Fatalf("request %d (%v): %+v", i, requests[i], d)
		}
	}
}
