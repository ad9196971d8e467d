package rl

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func TestGCRAAdmitsTheBurstThenDenies(t *testing.T) {
	ctx := context.Background()
	lim := newLimiter(t, openManual(t), Config{Algorithm: GCRA, Limit: "100/1m", Burst: 20, Name: "api"})
	for i := 0; i < 20; i++ {
		d, err := lim.Acquire(ctx, "user", 1)
		if err != nil || !d.Allowed {
			t.Fatalf("acquire %d: %+v, %v", i, d, err)
		}
		if d.Remaining != int64(19-i) || d.Limit != 100 {
			t.Fatalf("acquire %d: %+v", i, d)
		}
	}
	d, err := lim.Acquire(ctx, "user", 1)
	if err != nil || d.Allowed {
		t.Fatalf("21st acquire: %+v, %v (a denial is not an error)", d, err)
	}
	if d.RetryAfter != 600*time.Millisecond {
		t.Fatalf("RetryAfter = %v, want 600ms (one emission interval)", d.RetryAfter)
	}
}

func TestCostAboveBurstIsNeverAdmitted(t *testing.T) {
	lim := newLimiter(t, openManual(t), Config{Limit: "10/s"})
	d, err := lim.Acquire(context.Background(), "k", 11)
	if err != nil || d.Allowed || d.RetryAfter != Never {
		t.Fatalf("got %+v, %v; want a denial with RetryAfter Never", d, err)
	}
}

func TestPeekRefundResetAndTheManualClock(t *testing.T) {
	ctx := context.Background()
	s := openManual(t)
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	if _, err := lim.Acquire(ctx, "k", 10); err != nil {
		t.Fatal(err)
	}
	if d, _ := lim.Peek(ctx, "k", 1); d.Allowed || d.Remaining != 0 {
		t.Fatalf("peek on an empty key: %+v", d)
	}
	if d, _ := lim.Refund(ctx, "k", 3); d.Remaining != 3 {
		t.Fatalf("after refund 3: %+v", d)
	}
	if err := s.AdvanceClock(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d, _ := lim.Peek(ctx, "k", 0); d.Remaining != 4 {
		t.Fatalf("100ms later: %+v, want remaining 4", d)
	}
	if err := lim.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if d, _ := lim.Peek(ctx, "k", 0); d.Remaining != 10 || d.ResetAfter != 0 {
		t.Fatalf("after reset: %+v", d)
	}
	if err := s.SetClock(5_000_000); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClock(1); err == nil {
		t.Fatal("SetClock back in time succeeded")
	}
}

func TestAcquireBatchDecidesEachInOrder(t *testing.T) {
	lim := newLimiter(t, openManual(t), Config{Limit: "2/s"})
	ds, err := lim.AcquireBatch(context.Background(), []Request{{"a", 1}, {"a", 1}, {"a", 1}, {"b", 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, true}
	for i, d := range ds {
		if d.Allowed != want[i] {
			t.Fatalf("decision %d: %+v, want allowed %v", i, d, want[i])
		}
	}
}

func TestAllowAtMostTakesWhatIsLeft(t *testing.T) {
	ctx := context.Background()
	lim := newLimiter(t, openManual(t), Config{Limit: "10/s"})
	if n, d, err := lim.AllowAtMost(ctx, "k", 7); n != 7 || !d.Allowed || err != nil {
		t.Fatalf("first: %d %+v %v", n, d, err)
	}
	if n, d, err := lim.AllowAtMost(ctx, "k", 7); n != 3 || d.Remaining != 0 || err != nil {
		t.Fatalf("second: %d %+v %v", n, d, err)
	}
	if n, d, err := lim.AllowAtMost(ctx, "k", 7); n != 0 || d.Allowed || err != nil {
		t.Fatalf("third: %d %+v %v", n, d, err)
	}
	if d, err := lim.AllowN(ctx, "other", 10); !d.Allowed || err != nil {
		t.Fatalf("AllowN 10: %+v %v", d, err)
	}
	if d, err := lim.Allow(ctx, "other"); d.Allowed || err != nil {
		t.Fatalf("Allow after AllowN took all: %+v %v", d, err)
	}
}

func TestAcquireWaitOnManualClockReturnsTheFirstDecision(t *testing.T) {
	ctx := context.Background()
	lim := newLimiter(t, openManual(t), Config{Limit: "1/h"})
	lim.Acquire(ctx, "k", 1)
	d, err := lim.AcquireWait(ctx, "k", 1)
	if err != nil || d.Allowed || d.RetryAfter != time.Hour {
		t.Fatalf("got %+v, %v", d, err)
	}
}

func TestAcquireWaitWaitsOnARealClock(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lim := newLimiter(t, s, Config{Limit: "100/s", Burst: 1})
	lim.Acquire(ctx, "k", 1)
	// The second unit comes 10ms later: AcquireWait must be admitted.
	d, err := lim.AcquireWait(ctx, "k", 1)
	if err != nil || !d.Allowed {
		t.Fatalf("got %+v, %v", d, err)
	}
	// With a deadline shorter than the wait it answers the denial at once.
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	d, err = lim.AcquireWait(short, "k", 1)
	if err != nil || d.Allowed {
		t.Fatalf("short deadline: %+v, %v; want the denial and no error", d, err)
	}
	// A canceled ctx while waiting ends the wait with ctx.Err().
	lim2 := newLimiter(t, s, Config{Limit: "1/h"})
	lim2.Acquire(ctx, "k", 1)
	canceled, cancel2 := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel2)
	if _, err := lim2.AcquireWait(canceled, "k", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled wait: %v", err)
	}
}

// givenUpAtStart is a context canceled the moment AcquireWait starts
// waiting on it (its first Done), so that its answer and the cancel race.
type givenUpAtStart struct {
	context.Context
	waited atomic.Bool
}

func (c *givenUpAtStart) Done() <-chan struct{} {
	c.waited.Store(true)
	done := make(chan struct{})
	close(done)
	return done
}

func (c *givenUpAtStart) Err() error {
	if c.waited.Load() {
		return context.Canceled
	}
	return nil
}

// Waits canceled while their admission is on its way: each either returns
// the admission (kept) or context.Canceled, and then rl refunds the units,
// once. The key ends exactly at the units kept: none lost, none twice.
func TestACanceledWaitsAdmissionIsRefundedOnceByRl(t *testing.T) {
	ctx := context.Background()
	const limit, waits = 1000, 200
	lim := newLimiter(t, openManual(t), Config{Limit: "1000/h"})
	kept := 0
	for i := 0; i < waits; i++ {
		d, err := lim.AcquireWait(&givenUpAtStart{Context: ctx}, "k", 1)
		switch {
		case err == nil && d.Allowed:
			kept++
		case !errors.Is(err, context.Canceled):
			t.Fatalf("wait %d: %+v, %v", i, d, err)
		}
	}
	want := int64(limit - kept)
	// The refunds run on rl's thread: let them in (not a wait for time).
	remaining := int64(0)
	for i := 0; i < 100000 && remaining != want; i++ {
		runtime.Gosched()
		d, err := lim.Peek(ctx, "k", 0)
		if err != nil {
			t.Fatal(err)
		}
		if remaining = d.Remaining; remaining > want {
			t.Fatalf("remaining %d > %d: a refund counted twice (%d of %d kept)", remaining, want, kept, waits)
		}
	}
	if remaining != want {
		t.Fatalf("remaining %d, want %d: a refund lost (%d of %d kept)", remaining, want, kept, waits)
	}
	t.Logf("%d of %d waits kept their admission, %d refunded by rl", kept, waits, waits-kept)
}

func TestStatusNamesMatchLibrary(t *testing.T) {
	if len(statusNames) < len(generatedStatusNames) {
		t.Fatalf("library knows %d statuses, rl.h had %d", len(statusNames), len(generatedStatusNames))
	}
	for i, name := range generatedStatusNames {
		if statusNames[i] != name {
			t.Fatalf("status %d: library says %q, generated %q (run go generate)", i, statusNames[i], name)
		}
	}
	if got := StatusTimeout.String(); got != "RL_E_TIMEOUT" {
		t.Fatalf("StatusTimeout.String() = %q", got)
	}
	err := error(newError(StatusShutdown, "store: closed"))
	if !errors.Is(err, ErrShutdown) || errors.Is(err, ErrTimeout) {
		t.Fatal("errors.Is does not match by status")
	}
	var rlErr *Error
	if !errors.As(err, &rlErr) || rlErr.Message != "store: closed" {
		t.Fatalf("errors.As: %v", rlErr)
	}
}

func TestLimitsAreWhatRlParsed(t *testing.T) {
	lim := newLimiter(t, openManual(t), Config{Algorithm: GCRA, Limit: "10/sec, 1000/2hour"})
	got := lim.Limits()
	want := []Limit{{10, time.Second, 10}, {1000, 2 * time.Hour, 1000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Limits() = %+v, want %+v", got, want)
	}
	got[0].Limit = 99
	if lim.Limits()[0].Limit != 10 {
		t.Fatal("Limits() handed out its own slice")
	}
}

func TestLimitIndexNameAndInfoComeFromLibrl(t *testing.T) {
	ctx := context.Background()
	s := openManual(t)
	if info := s.Info(); info != (StoreInfo{Scheme: "memory", URL: "memory://?clock=manual", InProcess: true, ManualClock: true}) {
		t.Fatalf("Info() = %+v", info)
	}
	if name := newLimiter(t, s, Config{Limit: "1/s"}).Name(); name != "default" {
		t.Fatalf("unnamed limiter: Name() = %q, want librl's default", name)
	}
	// "100/s, 100/h": both limits are 100, so only LimitIndex tells them apart.
	lim := newLimiter(t, s, Config{Limit: "100/s, 100/h", Name: "api"})
	if lim.Name() != "api" {
		t.Fatalf("Name() = %q", lim.Name())
	}
	if d, err := lim.Acquire(ctx, "k", 100); err != nil || d.LimitIndex != 0 {
		t.Fatalf("first: %+v, %v; want index 0 (a tie)", d, err)
	}
	if err := s.AdvanceClock(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	d, err := lim.Acquire(ctx, "k", 1)
	if err != nil || d.Allowed || d.Limit != 100 || d.LimitIndex != 1 {
		t.Fatalf("after 2s: %+v, %v; want denied by 100/h (index 1)", d, err)
	}
}

// Single and batch decisions carry the suppression factor, on memory:// and Redis.
func TestSuppressionFactorInSingleAndBatchDecisions(t *testing.T) {
	ctx := context.Background()
	stores := []*Store{openManual(t)}
	if url := os.Getenv("RL_TEST_REDIS_URL"); url != "" {
		s, err := Open(ctx, url+"?clock=manual&prefix=rlgo-sf-"+strconv.FormatInt(time.Now().UnixNano(), 10))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	for _, s := range stores {
		// 16/4s is 4/s; 16 units in one second are 16/s: factor 1 - 4/16 up to the hard limit 32.
		lim := newLimiter(t, s, Config{Algorithm: Suppressed, Limit: "16/4s",
			Settings: []Setting{{"hard_limit_factor", "2"}}})
		if d, err := lim.Acquire(ctx, "k", 16); err != nil || !d.Allowed || d.SuppressionFactor != 0 {
			t.Fatalf("%s: first: %+v, %v", s.Info().Scheme, d, err)
		}
		if d, err := lim.Peek(ctx, "k", 1); err != nil || d.SuppressionFactor != 0.75 {
			t.Fatalf("%s: peek: %+v, %v; want factor 0.75", s.Info().Scheme, d, err)
		}
		ds, err := lim.AcquireBatch(ctx, []Request{{"k", 1}, {"k", 17}})
		if err != nil || ds[0].SuppressionFactor != 0.75 || ds[1].Allowed || ds[1].SuppressionFactor != 1 {
			t.Fatalf("%s: batch: %+v, %v; want factors 0.75 and 1", s.Info().Scheme, ds, err)
		}
	}
}

func TestAcquireWaitPastItsDeadlineIsTheDenialNotAnError(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lim := newLimiter(t, s, Config{Limit: "1/h"})
	lim.Acquire(ctx, "k", 1)
	// However the race between ctx's timer and rl's answer goes, the answer
	// is rl's denial: ctx's deadline is rl's deadline.
	for i := 0; i < 50; i++ {
		short, cancel := context.WithTimeout(ctx, time.Duration(i)*time.Microsecond+time.Microsecond)
		d, err := lim.AcquireWait(short, "k", 1)
		cancel()
		if err == nil && d.Allowed {
			t.Fatalf("admitted: %+v", d)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	}
}
