package rlgrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlgrpc"
)

// What the unary interceptor allocates per call beyond its acquire
// (go test -run x -bench . -benchmem: the allocation counts, not the
// timings, which are bench/frameworks' on a quiet machine):
// BenchmarkUnaryInterceptor's allocs/op minus BenchmarkAcquire's. Called
// outside a server, so grpc.SetHeader's own work (it fails: no stream) is
// not in it.

func BenchmarkUnaryInterceptor(b *testing.B) {
	lim := benchLimiter(b)
	intercept := rlgrpc.UnaryServerInterceptor(lim, rlgrpc.Options{Key: func(context.Context, string) string { return "bench-key" }})
	info := &grpc.UnaryServerInfo{FullMethod: "/bench.Bench/Limited"}
	handler := func(ctx context.Context, req any) (any, error) { return req, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := intercept(ctx, nil, info, handler); err != nil {
			b.Fatal(err)
		}
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
