package rlhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	rl "github.com/rl-dev/rl/bindings/go"
)

// What the middleware allocates per request beyond its acquire
// (go test -run x -bench . -benchmem: the allocation counts, not the
// timings, which are bench/frameworks' on a quiet machine):
// BenchmarkMiddleware's allocs/op minus BenchmarkAcquire's.

func BenchmarkMiddleware(b *testing.B) {
	lim := benchLimiter(b)
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h := Middleware(lim, Options{Key: func(*http.Request) string { return "bench-key" }})(ok)
	w := &headerOnlyWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
	if w.h.Get("RateLimit") == "" {
		b.Fatal("no RateLimit field")
	}
}

func BenchmarkAcquire(b *testing.B) {
	lim := benchLimiter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lim.Acquire(ctx, "bench-key", 1); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLimiter(b *testing.B) *rl.Limiter {
	store, err := rl.Open(context.Background(), "memory://?clock=manual")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	lim, err := store.Limiter(rl.Config{Limit: "1000000000/1s", Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lim.Close() })
	return lim
}

// headerOnlyWriter keeps the header fields and drops the rest: a
// ResponseWriter that allocates nothing itself.
type headerOnlyWriter struct{ h http.Header }

func (w *headerOnlyWriter) Header() http.Header         { return w.h }
func (w *headerOnlyWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerOnlyWriter) WriteHeader(int)             {}
