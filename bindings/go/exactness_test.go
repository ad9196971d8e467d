package rl

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// hammer runs 64 goroutines, spread over limiters, each acquiring one unit
// of one shared key `each` times; it returns how many were admitted and
// denied.
func hammer(t *testing.T, limiters []*Limiter, each int) (admitted, denied int64) {
	var a, d atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lim := limiters[g%len(limiters)]
			for i := 0; i < each; i++ {
				dec, err := lim.Acquire(context.Background(), "shared", 1)
				if err != nil {
					t.Errorf("acquire: %v", err)
					return
				}
				if dec.Allowed {
					a.Add(1)
				} else {
					d.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return a.Load(), d.Load()
}

func TestMemoryExactnessUnder64Goroutines(t *testing.T) {
	lim := newLimiter(t, openManual(t), Config{Algorithm: GCRA, Limit: "1000/1h", Name: "exact"})
	if a, d := hammer(t, []*Limiter{lim}, 25); a != 1000 || d != 600 {
		t.Fatalf("admitted %d, denied %d; want exactly 1000 and 600", a, d)
	}
}

// Four stores (four connections) and 64 goroutines share one Redis key: the
// admitted total is exactly the limit. The manual clocks keep time still.
func TestRedisExactnessAcrossStoresAndGoroutines(t *testing.T) {
	query := "clock=manual&prefix=" + uniquePrefix()
	var limiters []*Limiter
	for i := 0; i < 4; i++ {
		s := openRedis(t, query)
		if err := s.SetClock(1_000_000); err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, newLimiter(t, s, Config{Algorithm: GCRA, Limit: "1000/1h", Name: "exact"}))
	}
	if a, d := hammer(t, limiters, 25); a != 1000 || d != 600 {
		t.Fatalf("admitted %d, denied %d; want exactly 1000 and 600", a, d)
	}
}
