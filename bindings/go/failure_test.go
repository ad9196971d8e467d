package rl

// The core's failure policy through Go: Decision.Source, Config.OnFailure
// and LocalShare, Store.Stats, Metrics and Healthy, on a real unreachable
// store (nothing listens on port 1: every call is an outage) and on the
// test Redis.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// deadURL: two outages open the breaker; the manual clock keeps it open.
const deadURL = "redis://127.0.0.1:1?clock=manual&breaker_failures=2"

func openURL(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func stats(t *testing.T, s *Store) Stats {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st
}

func TestFailOpenAllowsEveryOutageAndCountsIt(t *testing.T) {
	s := openURL(t, deadURL)
	l := newLimiter(t, s, Config{Limit: "1/1m", OnFailure: FailOpen})
	if !s.Healthy() {
		t.Fatal("a new store is healthy")
	}
	for i := 0; i < 5; i++ {
		d, err := l.Acquire(context.Background(), "k", 1)
		if err != nil || !d.Allowed || d.Source != SourceFailOpen {
			t.Fatalf("call %d: %+v, %v; want allowed by fail_open", i, d, err)
		}
	}
	st := stats(t, s)
	if got := st.Decisions[SourceFailOpen]; got != (Verdicts{Allowed: 5}) {
		t.Fatalf("fail_open decisions %+v, want 5 allowed", got)
	}
	if st.Breaker != BreakerOpen || st.BreakerOpened != 1 || st.Healthy() || s.Healthy() {
		t.Fatalf("breaker %v opened %d times, want open once", st.Breaker, st.BreakerOpened)
	}
	if want := regexp.MustCompile(`(?m)^rl_decisions_total\{verdict="allowed",source="fail_open"\} 5$`); !want.MatchString(s.Metrics()) {
		t.Fatalf("metrics lack %v:\n%s", want, s.Metrics())
	}
}

func TestFailLocalDecidesWithTheLocalShare(t *testing.T) {
	s := openURL(t, deadURL)
	l := newLimiter(t, s, Config{Limit: "8/1m", OnFailure: FailLocal, LocalShare: "1/4"})
	var got []Decision
	for i := 0; i < 3; i++ {
		d, err := l.Acquire(context.Background(), "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	for i, want := range []bool{true, true, false} {
		if got[i].Allowed != want || got[i].Source != SourceLocal {
			t.Fatalf("call %d: %+v, want allowed=%v from local", i, got[i], want)
		}
	}
	if v := stats(t, s).Decisions[SourceLocal]; v != (Verdicts{Allowed: 2, Denied: 1}) {
		t.Fatalf("local decisions %+v", v)
	}
}

func TestFailClosedReturnsTheOutageCountedByStatus(t *testing.T) {
	s := openURL(t, deadURL)
	l := newLimiter(t, s, Config{Limit: "1/1m"})
	for i := 0; i < 3; i++ {
		if _, err := l.Acquire(context.Background(), "k", 1); !errors.Is(err, ErrBackendUnavailable) {
			t.Fatalf("call %d: %v, want ErrBackendUnavailable", i, err)
		}
	}
	st := stats(t, s)
	if st.Failures[StatusBackendUnavailable] != 3 || st.Failures[StatusTimeout] != 0 {
		t.Fatalf("failures %v", st.Failures)
	}
	// Bad input is never an outage: no policy hides it.
	open := newLimiter(t, s, Config{Limit: "1/1m", OnFailure: FailOpen})
	if _, err := open.Acquire(context.Background(), "k", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("cost 0: %v, want ErrInvalidArgument", err)
	}
}

func TestBadOnFailureNamesTheSetting(t *testing.T) {
	s := openManual(t)
	_, err := s.Limiter(Config{Limit: "1/s", OnFailure: "sometimes"})
	if !errors.Is(err, ErrInvalidArgument) || !regexp.MustCompile(`on_failure`).MatchString(err.Error()) {
		t.Fatalf("got %v", err)
	}
}

func TestSourceNames(t *testing.T) {
	for s, want := range map[Source]string{SourceStore: "store", SourceFailOpen: "fail_open", SourceLocal: "local", 7: "source_7"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
	for b, want := range map[BreakerState]string{BreakerClosed: "closed", BreakerOpen: "open", BreakerHalfOpen: "half_open", 7: "state_7"} {
		if b.String() != want {
			t.Errorf("%d: %q, want %q", int(b), b.String(), want)
		}
	}
}

func TestStatsOfARedisStore(t *testing.T) {
	s := openURL(t, redisURL(t))
	l := newLimiter(t, s, Config{Limit: "2/1m", Name: uniquePrefix()})
	for i := 0; i < 3; i++ {
		d, err := l.Acquire(context.Background(), "k", 1)
		if err != nil || d.Source != SourceStore {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
	st := stats(t, s)
	if v := st.Decisions[SourceStore]; v != (Verdicts{Allowed: 2, Denied: 1}) {
		t.Fatalf("store decisions %+v", v)
	}
	if st.RoundTrips < 3 || st.RoundTripP50 <= 0 || st.RoundTripP50 > st.RoundTripP95 ||
		st.RoundTripP95 > st.RoundTripP99 || st.RoundTripMax <= 0 {
		t.Fatalf("round trips %d: p50 %v p95 %v p99 %v max %v", st.RoundTrips, st.RoundTripP50,
			st.RoundTripP95, st.RoundTripP99, st.RoundTripMax)
	}
	if !s.Healthy() {
		t.Fatal("not healthy")
	}
	if want := regexp.MustCompile(`(?m)^rl_store_round_trip_seconds\{quantile="0.99"\} [0-9.e-]+$`); !want.MatchString(s.Metrics()) {
		t.Fatalf("metrics lack %v:\n%s", want, s.Metrics())
	}
	s.Close()
	if _, err := s.Stats(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Stats after Close: %v", err)
	}
	if s.Metrics() != "" || s.Healthy() {
		t.Fatal("a closed store has metrics or is healthy")
	}
}

func TestStatsCountTheLeasesOfEveryLimiter(t *testing.T) {
	s := openURL(t, "memory://?clock=manual")
	settings := []Setting{{"algorithm", "fixed_window"}, {"limit", "10/s"}, {"lease", "auto"},
		{"lease_threshold", "20"}, {"lease_share", "1/2"}}
	one := newLimiter(t, s, Config{Settings: settings})
	two := newLimiter(t, s, Config{Settings: settings})
	allowed := uint64(0)
	for i, lim := range []*Limiter{one, one, one, one, one, one, one, one, one, one, one, one, two, two, two} {
		d, err := lim.Acquire(context.Background(), "k", 1)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if d.Allowed {
			allowed++
		}
	}
	if allowed > 10 {
		t.Fatalf("%d allowed", allowed)
	}
	st := stats(t, s)
	l := st.Leases
	if l.Taken < 1 || l.UnitsLeased < l.Taken || l.Decisions < 1 || l.Decisions > l.UnitsLeased ||
		l.UnitsReturned > l.UnitsUnused {
		t.Fatalf("leases %+v", l)
	}
	if got := st.Decisions[SourceStore].Allowed; got != allowed {
		t.Fatalf("store allowed %d, want %d: a decision from a slice is the store's", got, allowed)
	}
	if want := fmt.Sprintf("\nrl_lease_taken_total %d\n", l.Taken); !strings.Contains(s.Metrics(), want) {
		t.Fatalf("metrics lack %q:\n%s", want, s.Metrics())
	}
	plain := openURL(t, "memory://")
	if _, err := newLimiter(t, plain, Config{Limit: "5/s"}).Acquire(context.Background(), "k", 1); err != nil {
		t.Fatal(err)
	}
	if l := stats(t, plain).Leases; l != (LeaseStats{}) {
		t.Fatalf("leases without lease=auto: %+v", l)
	}
}
