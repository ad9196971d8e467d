package rl

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// wantStatus fails unless err matches want (errors.Is) and its message
// mentions what.
func wantStatus(t *testing.T, call string, err error, want *Error, what string) {
	t.Helper()
	var rlErr *Error
	if !errors.Is(err, want) || !errors.As(err, &rlErr) {
		t.Fatalf("%s: got %v, want %v", call, err, want.Status)
	}
	if !strings.Contains(rlErr.Message, what) {
		t.Fatalf("%s: message %q does not name %q", call, rlErr.Message, what)
	}
}

func TestBadInputToEveryMethodIsAnError(t *testing.T) {
	ctx := context.Background()
	s := openManual(t)
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	long := strings.Repeat("k", 513)
	// A nil ctx is bad input too: Go forbids it, rl answers instead of panicking.
	var nilCtx context.Context

	cases := []struct {
		call string
		run  func() error
		want *Error
		what string
	}{
		{"Open(bad scheme)", func() error { _, err := Open(ctx, "nope://x"); return err }, ErrInvalidArgument, "nope"},
		{"Open(nil ctx)", func() error { _, err := Open(nilCtx, "memory://"); return err }, ErrInvalidArgument, "ctx"},
		{"Open(NUL in url)", func() error { _, err := Open(ctx, "memory://\x00"); return err }, ErrInvalidArgument, "url"},
		{"Open(bad setting)", func() error { _, err := Open(ctx, "memory://?clock=sundial"); return err }, ErrInvalidArgument, "clock"},
		{"Limiter(bad limit)", func() error { _, err := s.Limiter(Config{Limit: "ten/s"}); return err }, ErrInvalidArgument, "limit"},
		{"Limiter(no limit)", func() error { _, err := s.Limiter(Config{}); return err }, ErrInvalidArgument, "limit"},
		{"Limiter(bad algorithm)", func() error { _, err := s.Limiter(Config{Algorithm: "lottery", Limit: "1/s"}); return err }, ErrInvalidArgument, "algorithm"},
		{"Limiter(negative burst)", func() error { _, err := s.Limiter(Config{Limit: "1/s", Burst: -5}); return err }, ErrInvalidArgument, "burst"},
		{"Limiter(bad name)", func() error { _, err := s.Limiter(Config{Limit: "1/s", Name: "a{b}"}); return err }, ErrInvalidArgument, "name"},
		{"Limiter(NUL in name)", func() error { _, err := s.Limiter(Config{Limit: "1/s", Name: "a\x00b"}); return err }, ErrInvalidArgument, "name"},
		{"Limiter(NUL in limit)", func() error { _, err := s.Limiter(Config{Limit: "1/s\x00junk"}); return err }, ErrInvalidArgument, "limit"},
		{"Limiter(NUL in setting value)", func() error {
			_, err := s.Limiter(Config{Limit: "1/s", Settings: []Setting{{"granularity", "1ms\x00"}}})
			return err
		}, ErrInvalidArgument, "granularity"},
		{"Limiter(NUL in setting key)", func() error {
			_, err := s.Limiter(Config{Limit: "1/s", Settings: []Setting{{"name\x00x", "a"}}})
			return err
		}, ErrInvalidArgument, "setting key"},
		{"Open(NUL in url setting)", func() error { _, err := Open(ctx, "memory://?clock=manual\x00x"); return err }, ErrInvalidArgument, "url"},
		{"Limiter(unknown setting)", func() error {
			_, err := s.Limiter(Config{Limit: "1/s", Settings: []Setting{{"colour", "red"}}})
			return err
		}, ErrInvalidArgument, "colour"},
		{"Acquire(empty key)", func() error { _, err := lim.Acquire(ctx, "", 1); return err }, ErrInvalidArgument, "key"},
		{"Acquire(513-byte key)", func() error { _, err := lim.Acquire(ctx, long, 1); return err }, ErrInvalidArgument, "key"},
		{"Acquire(negative cost)", func() error { _, err := lim.Acquire(ctx, "k", -1); return err }, ErrInvalidArgument, "cost"},
		{"Acquire(zero cost)", func() error { _, err := lim.Acquire(ctx, "k", 0); return err }, ErrInvalidArgument, "cost"},
		{"Acquire(huge cost)", func() error { _, err := lim.Acquire(ctx, "k", 1<<62); return err }, ErrInvalidArgument, "cost"},
		{"Acquire(nil ctx)", func() error { _, err := lim.Acquire(nilCtx, "k", 1); return err }, ErrInvalidArgument, "ctx"},
		{"Peek(negative cost)", func() error { _, err := lim.Peek(ctx, "k", -1); return err }, ErrInvalidArgument, "cost"},
		{"Peek(empty key)", func() error { _, err := lim.Peek(ctx, "", 0); return err }, ErrInvalidArgument, "key"},
		{"Refund(zero cost)", func() error { _, err := lim.Refund(ctx, "k", 0); return err }, ErrInvalidArgument, "cost"},
		{"Reset(empty key)", func() error { return lim.Reset(ctx, "") }, ErrInvalidArgument, "key"},
		{"Reset(nil ctx)", func() error { return lim.Reset(nilCtx, "k") }, ErrInvalidArgument, "ctx"},
		{"AcquireWait(negative cost)", func() error { _, err := lim.AcquireWait(ctx, "k", -3); return err }, ErrInvalidArgument, "cost"},
		{"AcquireWait(nil ctx)", func() error { _, err := lim.AcquireWait(nilCtx, "k", 1); return err }, ErrInvalidArgument, "ctx"},
		{"AcquireBatch(empty)", func() error { _, err := lim.AcquireBatch(ctx, nil); return err }, ErrInvalidArgument, "count"},
		{"AcquireBatch(bad entry)", func() error {
			_, err := lim.AcquireBatch(ctx, []Request{{"a", 1}, {"", 1}})
			return err
		}, ErrInvalidArgument, "requests[1]"},
		{"AllowAtMost(0)", func() error { _, _, err := lim.AllowAtMost(ctx, "k", 0); return err }, ErrInvalidArgument, "n"},
		{"AllowN(negative)", func() error { _, err := lim.AllowN(ctx, "k", -2); return err }, ErrInvalidArgument, "cost"},
		{"AdvanceClock(negative)", func() error { return s.AdvanceClock(-1) }, ErrInvalidArgument, "delta"},
		{"nil *Limiter", func() error { _, err := (*Limiter)(nil).Acquire(ctx, "k", 1); return err }, ErrInvalidArgument, "limiter"},
		{"nil *Store", func() error { _, err := (*Store)(nil).Limiter(Config{Limit: "1/s"}); return err }, ErrInvalidArgument, "store"},
	}
	for _, c := range cases {
		wantStatus(t, c.call, c.run(), c.want, c.what)
	}
}

func TestSetClockNeedsAManualClock(t *testing.T) {
	s, err := Open(context.Background(), "memory://")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantStatus(t, "SetClock", s.SetClock(1), ErrInvalidArgument, "clock")
}

func TestClosedStoreAndLimiterAnswerErrShutdown(t *testing.T) {
	ctx := context.Background()
	s := openManual(t)
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	other := newLimiter(t, s, Config{Limit: "10/s"})
	s.Close()
	s.Close() // idempotent
	wantStatus(t, "Limiter on closed store", func() error { _, err := s.Limiter(Config{Limit: "1/s"}); return err }(), ErrShutdown, "closed")
	wantStatus(t, "SetClock on closed store", s.SetClock(5), ErrShutdown, "closed")
	_, err := lim.Acquire(ctx, "k", 1)
	wantStatus(t, "Acquire on closed store", err, ErrShutdown, "closed")
	_, err = lim.AcquireBatch(ctx, []Request{{"k", 1}})
	wantStatus(t, "AcquireBatch on closed store", err, ErrShutdown, "closed")
	other.Close()
	other.Close()
	_, err = other.Peek(ctx, "k", 1)
	wantStatus(t, "Peek on closed limiter", err, ErrShutdown, "closed")
}

// Keys are (bytes, length): a NUL byte is part of the key, never its end.
func TestKeysHoldingNULBytesAreWholeKeys(t *testing.T) {
	ctx := context.Background()
	lim := newLimiter(t, openManual(t), Config{Limit: "1/h"})
	keys := []string{"a\x00b", "a", "a\x00c", "\x00", "\x00\x00", strings.Repeat("x", 300) + "\x00y", strings.Repeat("x", 300)}
	for _, key := range keys {
		if d, err := lim.Acquire(ctx, key, 1); err != nil || !d.Allowed {
			t.Fatalf("Acquire(%q): %+v, %v; want admitted (a key of its own)", key, d, err)
		}
	}
	for _, key := range keys {
		if d, err := lim.Peek(ctx, key, 1); err != nil || d.Allowed {
			t.Fatalf("Peek(%q): %+v, %v; want denied (spent)", key, d, err)
		}
	}
}
