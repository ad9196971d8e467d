package main

// The same answers: identical request sequences sent to envoyproxy/ratelimit
// and to rl-ratelimit, each on its own redis-server, the responses compared
// field by field (overall code, every status's code, current_limit,
// limit_remaining, duration_until_reset, and the response headers).

import (
	"fmt"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const compatConfig = `domain: compat
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: path
    value: /login
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: path
    value: /api/*
    rate_limit: {unit: day, requests_per_unit: 4}
  - key: path
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: user
    descriptors:
      - key: plan
        value: free
        rate_limit: {unit: hour, requests_per_unit: 2}
      - key: plan
        rate_limit: {unit: day, requests_per_unit: 6}
  - key: tenant
    rate_limit: {unit: hour, requests_per_unit: 4, name: tenant_wide}
  - key: tenant_vip
    rate_limit:
      unit: hour
      requests_per_unit: 8
      replaces: [{name: tenant_wide}]
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: internal
    rate_limit: {unlimited: true}
  - key: shared
    value: "team-*"
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: zero
    rate_limit: {unit: week, requests_per_unit: 0}
  - key: quota
    quota_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: huge
    rate_limit: {unit: hour, requests_per_unit: 3000000000}
`

func entry(kv ...string) *rlv3.RateLimitDescriptor {
	d := &rlv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &rlv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

func withHits(n uint64, d *rlv3.RateLimitDescriptor) *rlv3.RateLimitDescriptor {
	d.HitsAddend = wrapperspb.UInt64(n)
	return d
}

func request(domain string, hits uint32, ds ...*rlv3.RateLimitDescriptor) *pb.RateLimitRequest {
	return &pb.RateLimitRequest{Domain: domain, HitsAddend: hits, Descriptors: ds}
}

func repeat(n int, r *pb.RateLimitRequest) []*pb.RateLimitRequest {
	out := make([]*pb.RateLimitRequest, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// compatSequences: what envoyproxy/ratelimit's README and tests cover.
func compatSequences() map[string][]*pb.RateLimitRequest {
	var several []*pb.RateLimitRequest
	for i := 0; i < 5; i++ {
		several = append(several, request("compat", 0, entry("remote_address", "10.0.0.2"), entry("path", "/login"), entry("path", "/other")))
	}
	var hits []*pb.RateLimitRequest
	hits = append(hits, request("compat", 2, entry("path", "/x")), request("compat", 2, entry("path", "/x")),
		request("compat", 0, withHits(0, entry("path", "/x"))), request("compat", 2, entry("path", "/x")),
		request("compat", 0, withHits(0, entry("path", "/x"))), request("compat", 1, entry("path", "/x")),
		request("compat", 0, withHits(3, entry("path", "/y")), withHits(0, entry("path", "/y"))),
		request("compat", 0, withHits(4, entry("path", "/z"))), request("compat", 0, entry("path", "/z")),
		request("compat", 1, withHits(1, entry("path", "/z"))))
	var shared []*pb.RateLimitRequest
	for _, team := range []string{"team-a", "team-b", "team-c", "team-a", "team-d"} {
		shared = append(shared, request("compat", 0, entry("shared", team)))
	}
	return map[string][]*pb.RateLimitRequest{
		"key_only":        repeat(5, request("compat", 0, entry("remote_address", "10.0.0.1"))),
		"exact":           repeat(4, request("compat", 0, entry("path", "/login"))),
		"wildcard":        append(repeat(3, request("compat", 0, entry("path", "/api/users"))), repeat(3, request("compat", 0, entry("path", "/api/orders")))...),
		"nested":          append(repeat(3, request("compat", 0, entry("user", "u1", "plan", "free"))), repeat(7, request("compat", 0, entry("user", "u1", "plan", "pro")))...),
		"too_deep":        repeat(3, request("compat", 0, entry("remote_address", "10.0.0.9", "extra", "x"))),
		"no_rule":         repeat(2, request("compat", 0, entry("user", "u2"), entry("nothing", "here"))),
		"replaces":        repeat(6, request("compat", 0, entry("tenant", "t1"), entry("tenant_vip", "t1"))),
		"no_replace":      repeat(6, request("compat", 0, entry("tenant", "t2"))),
		"shadow":          repeat(3, request("compat", 0, entry("shadow", "s1"), entry("path", "/shadowed"))),
		"unlimited":       repeat(3, request("compat", 0, entry("internal", "yes"), entry("remote_address", "10.0.0.3"))),
		"several":         several,
		"hits":            hits,
		"share_threshold": shared,
		"zero_limit":      repeat(2, request("compat", 0, entry("zero", "z"))),
		"quota":           repeat(3, request("compat", 0, entry("quota", "q"), entry("path", "/quota"))),
		"unknown_domain":  repeat(2, request("nosuch", 0, entry("path", "/login"))),
		"override": repeat(3, request("compat", 0, &rlv3.RateLimitDescriptor{
			Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "path", Value: "/override"}},
			Limit:   &rlv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: 3}})),
		"big_hits": {request("compat", 4294967295, entry("path", "/big")), request("compat", 0, entry("path", "/big"))},
		// beyond half an hour rule's counting capacity (2^31 of 2^32), and
		// the limiter full: over, as the exact count is
		"big_hits_full": append(repeat(4, request("compat", 4294967295, entry("path", "/full"))),
			request("compat", 0, entry("path", "/full")), request("compat", 0, withHits(0, entry("path", "/full")))),
		// a limit at or above half the capacity: counted under 2^40
		"huge_limit": {request("compat", 2000000000, entry("huge", "h")), request("compat", 999999999, entry("huge", "h")),
			request("compat", 0, entry("huge", "h")), request("compat", 0, entry("huge", "h")), request("compat", 4294967295, entry("huge", "h"))},
	}
}

// awayFromHourEdge waits, when the hour ends within a few seconds, for the
// next one: both servers' hour windows must not turn mid-sequence.
func awayFromHourEdge() {
	now := time.Now()
	if left := time.Until(now.Truncate(time.Hour).Add(time.Hour)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// sameResponse compares two answers; durations may differ by one second
// only if a second turned between the two calls.
func sameResponse(a, b *pb.RateLimitResponse, secondTurned bool) error {
	a, b = proto.Clone(a).(*pb.RateLimitResponse), proto.Clone(b).(*pb.RateLimitResponse)
	if secondTurned {
		for i := range min(len(a.Statuses), len(b.Statuses)) {
			da, db := a.Statuses[i].GetDurationUntilReset(), b.Statuses[i].GetDurationUntilReset()
			if da != nil && db != nil && da.Seconds-db.Seconds <= 1 && db.Seconds-da.Seconds <= 1 {
				db.Seconds = da.Seconds
			}
		}
		dropReset := func(hs []*core.HeaderValue) {
			for _, h := range hs {
				if h.Key == "RateLimit-Reset" {
					h.Value = "*"
				}
			}
		}
		dropReset(a.ResponseHeadersToAdd)
		dropReset(b.ResponseHeadersToAdd)
	}
	if !proto.Equal(a, b) {
		return fmt.Errorf("\n  envoyproxy/ratelimit: %s\n  rl-ratelimit:         %s", protojson.Format(a), protojson.Format(b))
	}
	return nil
}

func TestSameAnswersAsEnvoyRatelimit(t *testing.T) {
	const cache = "LOCAL_CACHE_SIZE_IN_BYTES=1048576"
	t.Run("lua", func(t *testing.T) { sameAnswers(t, "", nil, nil) })
	t.Run("module", func(t *testing.T) {
		if redisModule == "" {
			t.Skip("RL_REDIS_MODULE (build/redis-module/librl_redis.so) not set")
		}
		sameAnswers(t, redisModule, nil, nil)
	})
	// the over-limit cache: both with it, and rl's against none
	t.Run("local_cache", func(t *testing.T) { sameAnswers(t, "", []string{cache}, []string{cache}) })
	t.Run("local_cache_vs_none", func(t *testing.T) { sameAnswers(t, "", nil, []string{cache}) })
}

// sameAnswers: rl-ratelimit on a redis-server with module (or the Lua
// code), each server with its own extra settings.
func sameAnswers(t *testing.T, module string, refEnv, ourEnv []string) {
	files := map[string]string{"compat.yaml": compatConfig}
	env := []string{"LIMIT_RESPONSE_HEADERS_ENABLED=true"}
	ref := startReference(t, startRedis(t).Addr(), files, append(env, refEnv...)...)
	ours := startRL(t, startRedisWith(t, module).Addr(), files, append(env, ourEnv...)...)
	awayFromHourEdge()
	calls := 0
	for name, seq := range compatSequences() {
		for i, req := range seq {
			before := time.Now().Unix()
			want, werr := ref.Call(req)
			got, gerr := ours.Call(req)
			turned := time.Now().Unix() != before
			calls++
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("%s step %d: errors differ: envoyproxy/ratelimit %v, rl-ratelimit %v", name, i, werr, gerr)
			}
			if werr != nil {
				if status.Code(werr) != status.Code(gerr) {
					t.Errorf("%s step %d: error codes differ: %v vs %v", name, i, werr, gerr)
				}
				continue
			}
			if err := sameResponse(want, got, turned); err != nil {
				t.Fatalf("%s step %d (%s): %v", name, i, protojson.Format(req), err)
			}
		}
	}
	t.Logf("%d requests, identical answers", calls)
}

func TestSameJSONAnswers(t *testing.T) {
	files := map[string]string{"compat.yaml": compatConfig}
	ref := startReference(t, startRedis(t).Addr(), files)
	ours := startRL(t, startRedis(t).Addr(), files)
	awayFromHourEdge()
	bodies := []string{
		`{"domain":"compat","descriptors":[{"entries":[{"key":"path","value":"/login"}]}]}`,
		`{"domain":"compat","descriptors":[{"entries":[{"key":"path","value":"/login"}]}]}`,
		`{"domain":"compat","descriptors":[{"entries":[{"key":"path","value":"/login"}]}]}`,
		`{"domain":"compat","hits_addend":2,"descriptors":[{"entries":[{"key":"remote_address","value":"1.2.3.4"}]}]}`,
		`{"domain":"","descriptors":[{"entries":[{"key":"path","value":"/login"}]}]}`,
		`{"domain":"compat","descriptors":[]}`,
		`{"domain":"compat"`,
		`not json`,
		`{"domain":"compat","unknown_field":1}`,
		`{"domain":"nosuch","descriptors":[{"entries":[{"key":"a","value":"b"}]}]}`,
		`{"domain":"compat","hitsAddend":"x","descriptors":[{"entries":[{"key":"a","value":"b"}]}]}`,
	}
	for i, body := range bodies {
		before := time.Now().Unix()
		wc, wb := ref.PostJSON(t, body)
		gc, gb := ours.PostJSON(t, body)
		turned := time.Now().Unix() != before
		if wc != gc {
			t.Fatalf("body %d %s: status %d from envoyproxy/ratelimit, %d from rl-ratelimit (%s)", i, body, wc, gc, gb)
		}
		if wc != 200 && wc != 429 {
			continue
		}
		var want, got pb.RateLimitResponse
		if err := protojson.Unmarshal(wb, &want); err != nil {
			t.Fatalf("body %d: envoyproxy/ratelimit's reply %q: %v", i, wb, err)
		}
		if err := protojson.Unmarshal(gb, &got); err != nil {
			t.Fatalf("body %d: rl-ratelimit's reply %q: %v", i, gb, err)
		}
		if err := sameResponse(&want, &got, turned); err != nil {
			t.Fatalf("body %d %s: %v", i, body, err)
		}
	}
}
