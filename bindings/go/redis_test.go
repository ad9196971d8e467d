package rl

// Tests against the real redis-server of scripts/with-redis
// (RL_TEST_REDIS_URL); they skip without it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// withQuery adds query settings to a store URL.
func withQuery(url, query string) string {
	if strings.Contains(url, "?") {
		return url + "&" + query
	}
	return url + "?" + query
}

var prefixes atomic.Int64

// uniquePrefix keeps every test's keys apart on the shared server.
func uniquePrefix() string {
	return fmt.Sprintf("rlgo-%d-%d", time.Now().UnixNano(), prefixes.Add(1))
}

// pauseRedis stops the server (SIGSTOP) until the test ends, so that calls
// stay in flight. (CLIENT PAUSE would block our own UNPAUSE too.)
func pauseRedis(t testing.TB) {
	t.Helper()
	pidText, err := os.ReadFile(filepath.Join(os.Getenv("RL_TEST_REDIS_DIR"), "redis.pid"))
	if err != nil {
		t.Fatalf("the test Redis's pid (RL_TEST_REDIS_DIR): %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
}

// waitForCallsInFlight returns once n calls on s have started (each counts
// in the store's gate until its answer comes).
func waitForCallsInFlight(t testing.TB, s *Store, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.gate.calls.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d calls started", s.gate.calls.Load(), n)
		}
	}
}

func openRedis(t testing.TB, query string) *Store {
	t.Helper()
	s, err := Open(context.Background(), withQuery(redisURL(t), query))
	if err != nil {
		t.Fatalf("Open redis: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRedisCallsInFlightAtCloseEndWithErrShutdown(t *testing.T) {
	redisURL(t)
	s, err := Open(context.Background(), withQuery(redisURL(t), "prefix="+uniquePrefix()+"&timeout_ms=20000"))
	if err != nil {
		t.Fatal(err)
	}
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	lim.Acquire(context.Background(), "k", 1) // connected and scripts loaded
	pauseRedis(t)
	const calls = 100
	errs := make(chan error, calls)
	for i := 0; i < calls; i++ {
		go func() {
			_, err := lim.Acquire(context.Background(), "k", 1)
			errs <- err
		}()
	}
	waitForCallsInFlight(t, s, calls)
	s.Close()
	for i := 0; i < calls; i++ {
		if err := <-errs; !errors.Is(err, ErrShutdown) {
			t.Fatalf("call %d in flight at Close: %v, want ErrShutdown", i, err)
		}
	}
	lim.Close()
	wantNothingLive(t)
}

// 10,000 goroutines waiting on a paused Redis park as goroutines: the
// process keeps a handful of OS threads. A ctx that ends returns at once.
func TestRedisWaitingGoroutinesDoNotBecomeThreads(t *testing.T) {
	s := openRedis(t, "prefix="+uniquePrefix()+"&timeout_ms=20000")
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	lim.Acquire(context.Background(), "k", 1)
	pauseRedis(t)
	const waiters = 10000
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() {
			_, err := lim.Acquire(ctx, fmt.Sprintf("k%d", i), 1)
			errs <- err
		}()
	}
	waitForCallsInFlight(t, s, waiters)
	if threads := osThreads(t); threads > 64 {
		t.Fatalf("%d OS threads with %d goroutines waiting on Redis", threads, waiters)
	}
	cancel()
	for i := 0; i < waiters; i++ {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled waiter: %v", err)
		}
	}
	// The replies were never read: Close drops them and frees every handle.
	s.Close()
	lim.Close()
	wantNothingLive(t)
}

// osThreads is the number of threads of this process.
func osThreads(t testing.TB) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "Threads: %d", &n); err == nil {
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// DecidesWith: nothing for memory://; on Redis the script_mode setting and
// the nodes seen, which grow as calls reach them (and, when the run has a
// server with rl's module, RL_TEST_REDIS_MODULE_URL, the module found there).
func TestDecidesWithShowsWhatDecidesInRedis(t *testing.T) {
	ctx := context.Background()
	if d, err := openManual(t).DecidesWith(); err != nil || d != (DecidesWith{}) {
		t.Fatalf("memory://: DecidesWith() = %+v, %v; want the zero value", d, err)
	}
	servers := []struct {
		url  string
		want DecidesWith
	}{{redisURL(t), DecidesWith{"auto", "functions", 0, 1}}}
	if url := os.Getenv("RL_TEST_REDIS_MODULE_URL"); url != "" {
		servers = append(servers, struct {
			url  string
			want DecidesWith
		}{url, DecidesWith{"auto", "functions", 1, 0}})
	}
	for _, server := range servers {
		s, err := Open(ctx, withQuery(server.url, "prefix="+uniquePrefix()))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := s.DecidesWith(); err != nil || d != (DecidesWith{"auto", "functions", 0, 0}) {
			t.Fatalf("before a call: DecidesWith() = %+v, %v", d, err)
		}
		if _, err := newLimiter(t, s, Config{Limit: "5/h"}).Acquire(ctx, "k", 1); err != nil {
			t.Fatal(err)
		}
		if d, err := s.DecidesWith(); err != nil || d != server.want {
			t.Fatalf("after a call: DecidesWith() = %+v, %v; want %+v", d, err, server.want)
		}
		s.Close()
		if _, err := s.DecidesWith(); !errors.Is(err, ErrShutdown) {
			t.Fatalf("after Close: %v, want ErrShutdown", err)
		}
	}
	s, err := Open(ctx, withQuery(redisURL(t), "script_mode=scripts"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d, err := s.DecidesWith(); err != nil || d != (DecidesWith{"scripts", "scripts", 0, 0}) {
		t.Fatalf("script_mode=scripts: DecidesWith() = %+v, %v", d, err)
	}
}
