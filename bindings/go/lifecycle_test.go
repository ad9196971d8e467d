package rl

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// wantNothingLive fails unless every handle, store and limiter this package
// made has been released.
func wantNothingLive(t *testing.T) {
	t.Helper()
	if h, s, l := liveHandles.Load(), liveStores.Load(), liveLimiters.Load(); h != 0 || s != 0 || l != 0 {
		t.Fatalf("live after the test: %d handles, %d stores, %d limiters", h, s, l)
	}
}

func TestOpenAndCloseThousandsOfStoresAndLimiters(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < 2000; i++ {
		s, err := Open(ctx, "memory://")
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ {
			l, err := s.Limiter(Config{Limit: "10/s", Name: "lifecycle"})
			if err != nil {
				t.Fatal(err)
			}
			if d, err := l.Acquire(ctx, "k", 1); err != nil || !d.Allowed {
				t.Fatalf("store %d limiter %d: %+v %v", i, j, d, err)
			}
			l.Close()
		}
		s.Close()
	}
	wantNothingLive(t)
}

func TestForgottenStoresAndLimitersAreFreedByTheCollector(t *testing.T) {
	func() {
		for i := 0; i < 100; i++ {
			s, _ := Open(context.Background(), "memory://")
			s.Limiter(Config{Limit: "1/s"})
		}
	}()
	for i := 0; i < 1000 && liveStores.Load()+liveLimiters.Load() > 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	wantNothingLive(t)
}

func TestCallsInFlightAtCloseEndWithErrShutdown(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	lim := newLimiter(t, s, Config{Limit: "1000000/s"})
	const calls = 5000
	var wg sync.WaitGroup
	var mu sync.Mutex
	decided, shutdown := 0, 0
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := lim.Acquire(ctx, "k", 1)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				decided++
			case errors.Is(err, ErrShutdown):
				shutdown++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	s.Close()
	wg.Wait()
	if decided+shutdown != calls {
		t.Fatalf("%d decided + %d shut down != %d calls", decided, shutdown, calls)
	}
	t.Logf("%d decided, %d ended by Close", decided, shutdown)
	lim.Close()
	wantNothingLive(t)
}

func TestCanceledCallsUnderLoadLeakNoHandle(t *testing.T) {
	s, err := Open(context.Background(), "memory://")
	if err != nil {
		t.Fatal(err)
	}
	lim := newLimiter(t, s, Config{Limit: "1000000/s"})
	var wg sync.WaitGroup
	var canceled atomic.Int64
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				switch i % 3 {
				case 0:
					cancel() // ended before the call
				case 1:
					go cancel() // ends while the call is in flight, or not
				}
				_, err := lim.Acquire(ctx, "k", 1)
				cancel()
				if errors.Is(err, context.Canceled) {
					canceled.Add(1)
				} else if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if canceled.Load() < 64*100 {
		t.Fatalf("only %d calls were canceled", canceled.Load())
	}
	// Close completes whatever is still in flight: every handle is gone.
	s.Close()
	lim.Close()
	wantNothingLive(t)
}
