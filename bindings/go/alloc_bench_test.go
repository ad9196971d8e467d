package rl

import (
	"context"
	"testing"
)

// Benchmarks of the hot paths, for their allocations per call
// (go test -run x -bench . -benchmem): timings are for bench/go on a quiet
// machine, not these.

// BenchmarkAcquireMemory is the synchronous path: one decision per call.
func BenchmarkAcquireMemory(b *testing.B) {
	l := newLimiter(b, openManual(b), Config{Limit: "1000000000/s"})
	benchmarkAcquire(b, l, context.Background())
}

// BenchmarkAcquireRedisAlone is the synchronous path on Redis: a lone
// caller whose ctx cannot be canceled.
func BenchmarkAcquireRedisAlone(b *testing.B) {
	benchmarkAcquire(b, redisLimiter(b), context.Background())
}

// BenchmarkAcquireRedisAsync is the asynchronous path: a ctx that can be
// canceled.
func BenchmarkAcquireRedisAsync(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchmarkAcquire(b, redisLimiter(b), ctx)
}

// BenchmarkAcquireBatchMemory is a batch of 8 requests.
func BenchmarkAcquireBatchMemory(b *testing.B) {
	l, requests, ctx := batchBench(b)
	for b.Loop() {
		if _, err := l.AcquireBatch(ctx, requests); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireBatchEachMemory is a batch of 8 requests, a result each.
func BenchmarkAcquireBatchEachMemory(b *testing.B) {
	l, requests, ctx := batchBench(b)
	for b.Loop() {
		if _, err := l.AcquireBatchEach(ctx, requests); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireWaitMemory is an AcquireWait admitted at once.
func BenchmarkAcquireWaitMemory(b *testing.B) {
	l := newLimiter(b, openManual(b), Config{Limit: "1000000000/s"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.AcquireWait(ctx, "bench-key", 1); err != nil {
			b.Fatal(err)
		}
	}
}

func batchBench(b *testing.B) (*Limiter, []Request, context.Context) {
	l := newLimiter(b, openManual(b), Config{Limit: "1000000000/s"})
	requests := make([]Request, 8)
	for i := range requests {
		requests[i] = Request{Key: "bench-batch-" + string(rune('a'+i)), Cost: 1}
	}
	b.ReportAllocs()
	return l, requests, context.Background()
}

func redisLimiter(b *testing.B) *Limiter {
	s, err := Open(context.Background(), redisURL(b))
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	return newLimiter(b, s, Config{Limit: "1000000000/s", Name: "bench-allocs"})
}

func benchmarkAcquire(b *testing.B, l *Limiter, ctx context.Context) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Acquire(ctx, "bench-key", 1); err != nil {
			b.Fatal(err)
		}
	}
}
