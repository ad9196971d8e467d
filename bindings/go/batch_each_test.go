package rl

// AcquireBatchEach: a result per request, on memory://, on a store that is
// down (every request fails alike, or takes OnFailure) and on the test Redis,
// where a key holding the wrong type fails its request alone.

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestAcquireBatchEachDecidesEveryRequest(t *testing.T) {
	lim := newLimiter(t, openManual(t), Config{Limit: "2/s"})
	rs, err := lim.AcquireBatchEach(context.Background(), []Request{{"a", 1}, {"a", 1}, {"a", 1}, {"b", 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, true} // a denial is a decision, not an error
	if len(rs) != len(want) {
		t.Fatalf("%d results, want %d", len(rs), len(want))
	}
	for i, r := range rs {
		if r.Err != nil || r.Decision.Allowed != want[i] {
			t.Fatalf("result %d: %+v, want allowed %v", i, r, want[i])
		}
	}
}

func TestAcquireBatchEachBadInputIsTheCallsError(t *testing.T) {
	ctx := context.Background()
	s := openManual(t)
	lim := newLimiter(t, s, Config{Limit: "10/s"})
	_, err := lim.AcquireBatchEach(ctx, nil)
	wantStatus(t, "AcquireBatchEach(empty)", err, ErrInvalidArgument, "count")
	_, err = lim.AcquireBatchEach(ctx, []Request{{"a", 1}, {"", 1}})
	wantStatus(t, "AcquireBatchEach(bad key)", err, ErrInvalidArgument, "requests[1].key")
	_, err = lim.AcquireBatchEach(ctx, []Request{{"a", 1}, {"b", 0}})
	wantStatus(t, "AcquireBatchEach(bad cost)", err, ErrInvalidArgument, "requests[1].cost")
	if d, _ := lim.Peek(ctx, "a", 0); d.Remaining != 10 {
		t.Fatalf("a bad batch decided something: %+v", d)
	}
	s.Close()
	_, err = lim.AcquireBatchEach(ctx, []Request{{"a", 1}})
	wantStatus(t, "AcquireBatchEach on closed store", err, ErrShutdown, "closed")
}

func TestAcquireBatchEachOutageFailsEveryRequest(t *testing.T) {
	lim := newLimiter(t, openURL(t, deadURL), Config{Limit: "5/s"})
	rs, err := lim.AcquireBatchEach(context.Background(), []Request{{"a", 1}, {"b", 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		var e *Error
		if !errors.Is(r.Err, ErrBackendUnavailable) || !errors.As(r.Err, &e) || e.Message == "" {
			t.Fatalf("result %d: %+v, want ErrBackendUnavailable with a message", i, r)
		}
	}
}

func TestAcquireBatchEachFailOpenDecidesEveryRequest(t *testing.T) {
	lim := newLimiter(t, openURL(t, deadURL), Config{Limit: "5/s", OnFailure: FailOpen})
	rs, err := lim.AcquireBatchEach(context.Background(), []Request{{"a", 1}, {"b", 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Err != nil || !r.Decision.Allowed || r.Decision.Source != SourceFailOpen {
			t.Fatalf("result %d: %+v, want allowed by fail_open", i, r)
		}
	}
}

// redisCLI runs redis-cli against the test Redis.
func redisCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-u", redisURL(t), "--no-auth-warning"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestRedisAcquireBatchEachFailsARequestAlone(t *testing.T) {
	ctx := context.Background()
	prefix := uniquePrefix()
	s := openRedis(t, "prefix="+prefix)
	lim := newLimiter(t, s, Config{Limit: "5/s", Name: "each"})
	if _, err := lim.Acquire(ctx, "broken", 1); err != nil {
		t.Fatal(err)
	}
	// Its Redis key becomes a set, a type no script reads.
	key := redisCLI(t, "--scan", "--pattern", prefix+":*")
	if key == "" || strings.Contains(key, "\n") {
		t.Fatalf("keys under %s: %q, want one", prefix, key)
	}
	redisCLI(t, "DEL", key)
	redisCLI(t, "SADD", key, "x")
	rs, err := lim.AcquireBatchEach(ctx, []Request{{"a", 1}, {"broken", 1}, {"b", 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Err != nil || rs[0].Decision.Remaining != 4 || rs[2].Err != nil || rs[2].Decision.Remaining != 3 {
		t.Fatalf("results %+v: want a and b decided", rs)
	}
	if !errors.Is(rs[1].Err, ErrBackendError) || !strings.Contains(rs[1].Err.Error(), "WRONGTYPE") {
		t.Fatalf("result 1: %+v, want ErrBackendError naming WRONGTYPE", rs[1])
	}
}
