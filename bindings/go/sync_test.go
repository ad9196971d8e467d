package rl

// The synchronous path (sync.go): who takes it, and that it keeps what the
// asynchronous path promises about threads, ctx and Close.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// A goroutine alone on a Redis store with a ctx that cannot be canceled,
// and every call on memory://, is answered through rl's synchronous call:
// no cgo handle, no completion, and so is one whose ctx only its deadline
// can end (DeadlineOnly). A ctx that can be canceled keeps Redis
// calls asynchronous.
func TestALoneCallerCallsSynchronously(t *testing.T) {
	stores := map[string]*Store{"memory": openManual(t)}
	if os.Getenv("RL_TEST_REDIS_URL") != "" {
		stores["redis"] = openRedis(t, "prefix="+uniquePrefix())
	}
	for name, s := range stores {
		lim := newLimiter(t, s, Config{Limit: "1000/s"})
		acquire := func(ctx context.Context, calls int) int64 {
			before := syncCalls.Load()
			for i := 0; i < calls; i++ {
				if d, err := lim.Acquire(ctx, "k", 1); err != nil || !d.Allowed {
					t.Fatalf("%s: call %d: %+v %v", name, i, d, err)
				}
			}
			return syncCalls.Load() - before
		}
		if got := acquire(context.Background(), 100); got != 100 {
			t.Fatalf("%s: %d of 100 lone calls were synchronous", name, got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		want := int64(0)
		if s.Info().InProcess {
			want = 100
		}
		if got := acquire(ctx, 100); got != want {
			t.Fatalf("%s: %d of 100 lone calls with a ctx that can be canceled were synchronous, want %d", name, got, want)
		}
		// What rlhttp and rlgrpc acquire with: the same ctx, only its
		// deadline left to end the call.
		if got := acquire(DeadlineOnly(ctx), 100); got != 100 {
			t.Fatalf("%s: %d of 100 lone calls with DeadlineOnly(ctx) were synchronous", name, got)
		}
		cancel()
	}
}

// A call blocked in rl's synchronous call (Redis stopped) does not hold up
// the others: a canceled one returns at once. Limiter.Close does not wait
// for it; Store.Close ends it, and frees the limiter it held.
func TestRedisBlockedLoneCallKeepsCloseAndOthers(t *testing.T) {
	// Neither the deadline nor the liveness bound (a stopped server) may end
	// the call before Close does, however slow the machine.
	s, err := Open(context.Background(), withQuery(redisURL(t),
		"prefix="+uniquePrefix()+"&timeout_ms=60000&liveness_timeout_ms=60000"))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := s.Limiter(Config{Limit: "10/s"})
	if err != nil {
		t.Fatal(err)
	}
	lim.Acquire(context.Background(), "k", 1) // connected; the socket is left to lone callers
	pauseRedis(t)
	before := syncCalls.Load()

	blocked := make(chan error, 1)
	go func() {
		_, err := lim.Acquire(context.Background(), "k", 1)
		blocked <- err
	}()
	waitForCallsInFlight(t, s, 1)
	ctx, cancel := context.WithCancel(context.Background())
	canceled := make(chan error, 1)
	go func() {
		_, err := lim.Acquire(ctx, "k", 1)
		canceled <- err
	}()
	waitForCallsInFlight(t, s, 2)
	cancel()
	if err := <-canceled; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled beside the blocked call: %v, want context.Canceled", err)
	}

	lim.Close() // returns with the call still in rl
	if _, err := lim.Acquire(context.Background(), "k", 1); !errors.Is(err, ErrShutdown) {
		t.Fatalf("after Limiter.Close: %v, want ErrShutdown", err)
	}
	if liveLimiters.Load() != 1 {
		t.Fatalf("%d native limiters live while a call holds one, want 1", liveLimiters.Load())
	}
	s.Close()
	if err := <-blocked; !errors.Is(err, ErrShutdown) {
		t.Fatalf("blocked at Store.Close: %v, want ErrShutdown", err)
	}
	if got := syncCalls.Load() - before; got != 1 {
		t.Fatalf("%d synchronous calls ended by Store.Close, want 1", got)
	}
	wantNothingLive(t)
}

// 10,000 goroutines calling a live Redis back to back: one of them at most
// blocks an OS thread in rl's synchronous call, the rest park, so the
// process keeps a handful of threads (a blocking call each made it 106).
func TestRedisBusyGoroutinesDoNotBecomeThreads(t *testing.T) {
	s := openRedis(t, "prefix="+uniquePrefix()+"&timeout_ms=20000")
	lim := newLimiter(t, s, Config{Limit: "1000000/s"})
	const goroutines, calls = 10000, 5
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if _, err := lim.Acquire(context.Background(), fmt.Sprintf("k%d", g), 1); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for sampling := true; sampling; {
		select {
		case <-done:
			sampling = false
		case <-time.After(time.Millisecond):
		}
		most = max(most, osThreads(t))
	}
	close(errs)
	for err := range errs {
		t.Fatalf("call failed: %v", err)
	}
	if most > 64 {
		t.Fatalf("%d OS threads with %d goroutines calling Redis", most, goroutines)
	}
	t.Logf("at most %d OS threads", most)
}
