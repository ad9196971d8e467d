package rl

import (
	"context"
	"os"
	"testing"
)

// openManual opens a memory store with a manual clock, closed at the end.
func openManual(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), "memory://?clock=manual")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newLimiter(t testing.TB, s *Store, cfg Config) *Limiter {
	t.Helper()
	l, err := s.Limiter(cfg)
	if err != nil {
		t.Fatalf("Limiter(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// redisURL is the test Redis of scripts/with-redis; tests that need it skip
// without it.
func redisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("RL_TEST_REDIS_URL")
	if url == "" {
		t.Skip("RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
	}
	return url
}
