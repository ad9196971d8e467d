package main

// rl-ratelimit on its own: config errors at start and on reload, reload on
// change, rl's opt-in rules, a limit shared with an in-process Go service,
// Redis stopped and paused, bad input.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rl "github.com/rl-dev/rl/bindings/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func TestCheckConfigNamesFileLineAndReason(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown key":    {"domain: d\ndescriptors:\n  - key: a\n    rate_limt: {unit: second}\n", "bad.yaml:4: config error, unknown key \"rate_limt\""},
		"duplicate":      {"domain: d\ndescriptors:\n  - key: a\n  - key: a\n", "bad.yaml:4: duplicate descriptor composite key \"d.a\""},
		"bad unit":       {"domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n", "bad.yaml:5: invalid rate limit unit \"fortnight\""},
		"empty domain":   {"descriptors: []\n", "bad.yaml: config file cannot have empty domain"},
		"unlimited unit": {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: second}\n", "should not specify rate limit unit when unlimited"},
		"bad algorithm":  {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {algorithm: leaky, limit: 10/s}\n", "bad.yaml:4: algorithm"},
		"bad rl limit":   {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {limit: 10/fortnight}\n", "bad.yaml:4: limit"},
		"bad setting":    {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {limit: 10/s, settings: {no_such: 1}}\n", "bad.yaml:4: "},
		"not yaml":       {"domain: [\n", "bad.yaml: error loading config file"},
		"empty key":      {"domain: d\ndescriptors:\n  - value: a\n", "bad.yaml:3: descriptor has empty key"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		writeConfig(t, dir, "bad.yaml", c.yaml)
		out, err := exec.Command(serverBinary, "--check-config", dir).CombinedOutput()
		if err == nil {
			t.Errorf("%s: accepted: %s", name, out)
			continue
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %q does not say %q", name, out, c.want)
		}
	}
	dir := t.TempDir()
	writeConfig(t, dir, "ok.yaml", compatConfig)
	if out, err := exec.Command(serverBinary, "--check-config", dir).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("a good config: %v %s", err, out)
	}
}

func TestRefusesToStartOnABadConfig(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, filepath.Join(root, "config"), "bad.yaml", "domain: d\ndescriptors:\n  - key: a\n  - key: a\n")
	cmd := exec.Command(serverBinary)
	cmd.Env = append(os.Environ(), "RUNTIME_ROOT="+root, "REDIS_SOCKET_TYPE=tcp", "REDIS_URL=127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.yaml:4: duplicate descriptor") {
		t.Fatalf("started, or did not say why: %v %s", err, out)
	}
}

func TestIgnoredSettingsAreNamed(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"a.yaml": "domain: d\n"}, "REDIS_PIPELINE_WINDOW=150us", "USE_DOG_STATSD=false")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log.String(), "REDIS_PIPELINE_WINDOW") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.log.String(), "ignored: DISABLE_STATS, REDIS_PIPELINE_WINDOW, USE_DOG_STATSD, USE_STATSD") {
		t.Fatalf("log does not name the ignored settings: %s", s.log.String())
	}
}

func oneCall(t *testing.T, s *rateLimitServer, kv ...string) *pb.RateLimitResponse {
	t.Helper()
	resp, err := s.Call(request("d", 0, entry(kv...)))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestReloadKeepsOldConfigOnError(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"a.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n"})
	if got := oneCall(t, s, "k", "1").Statuses[0].CurrentLimit.RequestsPerUnit; got != 1 {
		t.Fatalf("limit %d", got)
	}
	writeConfig(t, s.ConfigDir, "a.yaml", "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 7}\n")
	waitFor(t, "the reload", func() bool { return oneCall(t, s, "k", "1").Statuses[0].CurrentLimit.RequestsPerUnit == 7 })
	writeConfig(t, s.ConfigDir, "a.yaml", "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: eon, requests_per_unit: 9}\n")
	waitFor(t, "the refusal", func() bool {
		_, body := s.Get(t, "/healthcheck")
		return strings.Contains(body, "a.yaml:4: invalid rate limit unit")
	})
	if got := oneCall(t, s, "k", "1").Statuses[0].CurrentLimit.RequestsPerUnit; got != 7 {
		t.Fatalf("the old config is not in force: limit %d", got)
	}
	if code, _ := s.Get(t, "/healthcheck"); code != 200 {
		t.Fatalf("healthcheck %d", code)
	}
	_, metrics := s.Get(t, "/metrics")
	if !strings.Contains(metrics, "ratelimit_service_config_load_error 1") || !strings.Contains(metrics, "ratelimit_service_config_last_reload_failed 1") {
		t.Fatalf("the refusal is not counted:\n%s", metrics)
	}
	hc, err := grpc_health_v1.NewHealthClient(s.conn).Check(context.Background(), &grpc_health_v1.HealthCheckRequest{Service: "ratelimit"})
	if err != nil || hc.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("grpc health: %v %v", hc, err)
	}
}

func TestReloadOnSymlinkSwap(t *testing.T) {
	r := startRedis(t)
	base := t.TempDir()
	v1, v2 := filepath.Join(base, "v1"), filepath.Join(base, "v2")
	writeConfig(t, filepath.Join(v1, "config"), "a.yaml", "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n")
	writeConfig(t, filepath.Join(v2, "config"), "a.yaml", "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 2}\n")
	current := filepath.Join(base, "current")
	if err := os.Symlink(v1, current); err != nil {
		t.Fatal(err)
	}
	s := startRL(t, r.Addr(), nil, "RUNTIME_ROOT="+current, "RUNTIME_WATCH_ROOT=true")
	if got := oneCall(t, s, "k", "x").Statuses[0].CurrentLimit.RequestsPerUnit; got != 1 {
		t.Fatalf("limit %d", got)
	}
	tmp := filepath.Join(base, "next")
	if err := os.Symlink(v2, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, current); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the swap", func() bool { return oneCall(t, s, "k", "x").Statuses[0].CurrentLimit.RequestsPerUnit == 2 })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const rlRulesConfig = `domain: shop
on_failure: closed
descriptors:
  - key: user
    rate_limit: {algorithm: gcra, limit: 20/1h}
  - key: burst_and_daily
    rate_limit: {algorithm: sliding_window, limit: "3/30s, 5/1d"}
  - key: odd_period
    rate_limit: {limit: 2/30s}
  - key: cached
    rate_limit: {algorithm: fixed_window, limit: 2/1h, settings: {deny_cache_keys: "1000"}}
`

func TestRLRules(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"shop.yaml": rlRulesConfig})
	call := func(kv ...string) *pb.RateLimitResponse_DescriptorStatus {
		resp, err := s.Call(request("shop", 0, entry(kv...)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Statuses[0]
	}
	// two limits on one descriptor, all or nothing: the 30 s limit denies the 4th
	for i := 1; i <= 4; i++ {
		st := call("burst_and_daily", "b")
		if want := i <= 3; (st.Code == pb.RateLimitResponse_OK) != want {
			t.Fatalf("request %d: %v", i, st)
		}
	}
	// 2 per 30 s (a period Envoy's units cannot say): unit UNKNOWN
	call("odd_period", "o")
	st := call("odd_period", "o")
	if st.Code != pb.RateLimitResponse_OK || st.CurrentLimit.RequestsPerUnit != 2 || st.CurrentLimit.Unit != pb.RateLimitResponse_RateLimit_UNKNOWN || st.DurationUntilReset.Seconds > 30 {
		t.Fatalf("odd period: %v", st)
	}
	if st := call("odd_period", "o"); st.Code != pb.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("third in 30 s: %v", st)
	}
	// any other rl setting: deny_cache_keys answers repeat denials in process
	for i := 1; i <= 5; i++ {
		if st := call("cached", "c"); (st.Code == pb.RateLimitResponse_OK) != (i <= 2) {
			t.Fatalf("cached %d: %v", i, st)
		}
	}
	_, m := s.Get(t, "/metrics")
	if !strings.Contains(m, `source="deny_cache"`) {
		t.Fatalf("no decision from the deny cache:\n%s", m)
	}
}

// TestSharedWithGoService: a Go service names the same limiter (name: the
// domain; key: user=alice; the rule's algorithm and limit) and shares the
// limit with the traffic through the server exactly, under concurrency.
func TestSharedWithGoService(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"shop.yaml": rlRulesConfig})
	store, err := rl.Open(context.Background(), "redis://"+r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Name: "shop", Algorithm: rl.GCRA, Limit: "20/1h"})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	var admitted, viaServer, inProcess atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if g%2 == 0 {
					resp, err := s.Call(request("shop", 0, entry("user", "alice")))
					if err != nil {
						t.Error(err)
						return
					}
					if resp.OverallCode == pb.RateLimitResponse_OK {
						admitted.Add(1)
						viaServer.Add(1)
					}
				} else {
					d, err := lim.Acquire(context.Background(), "user=alice", 1)
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
						inProcess.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 20 {
		t.Fatalf("admitted %d (server %d, service %d), want exactly 20", admitted.Load(), viaServer.Load(), inProcess.Load())
	}
	t.Logf("200 requests at 10x the limit: 20 admitted (%d through the server, %d in process)", viaServer.Load(), inProcess.Load())
}

func TestRedisDown(t *testing.T) {
	t.Run("lua", func(t *testing.T) { redisDown(t, "") })
	t.Run("module", func(t *testing.T) {
		if redisModule == "" {
			t.Skip("RL_REDIS_MODULE (build/redis-module/librl_redis.so) not set")
		}
		redisDown(t, redisModule)
	})
}

func redisDown(t *testing.T, module string) {
	r := startRedisWith(t, module)
	open := `domain: open
on_failure: open
descriptors:
  - key: k
    rate_limit: {unit: hour, requests_per_unit: 1}
`
	closed := "domain: closed\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n"
	s := startRL(t, r.Addr(), map[string]string{"open.yaml": open, "closed.yaml": closed}, "REDIS_TIMEOUT=300ms")
	for _, d := range []string{"open", "closed"} {
		if _, err := s.Call(request(d, 0, entry("k", "v"))); err != nil {
			t.Fatal(err)
		}
	}
	check := func(how string) {
		start := time.Now()
		_, err := s.Call(request("closed", 0, entry("k", "v")))
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("%s: closed domain: %v, want Unavailable", how, err)
		}
		resp, err := s.Call(request("open", 0, entry("k", "v")))
		if err != nil || resp.OverallCode != pb.RateLimitResponse_OK {
			t.Fatalf("%s: open domain: %v %v", how, resp, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s: took %v", how, time.Since(start))
		}
	}
	r.Pause()
	check("paused")
	r.Resume()
	r.Stop()
	check("stopped")
	r.start(t)
	waitFor(t, "recovery", func() bool {
		_, err := s.Call(request("closed", 0, entry("k", "w")))
		return err == nil
	})
}

func TestBadInput(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"})
	huge := make([]string, 0, 2*100)
	for i := 0; i < 100; i++ {
		huge = append(huge, fmt.Sprintf("k%d", i), "v")
	}
	many := request("d", 0)
	for i := 0; i < maxDescriptors+1; i++ {
		many.Descriptors = append(many.Descriptors, entry("k", "v"))
	}
	cases := []struct {
		name string
		req  *pb.RateLimitRequest
		code codes.Code
	}{
		{"no domain", request("", 0, entry("k", "v")), codes.Unknown},
		{"no descriptors", request("d", 0), codes.Unknown},
		{"too many descriptors", many, codes.InvalidArgument},
		{"too many entries", request("d", 0, entry(huge...)), codes.InvalidArgument},
		{"oversize value", request("d", 0, entry("k", strings.Repeat("x", 5000))), codes.InvalidArgument},
	}
	for _, c := range cases {
		if _, err := s.Call(c.req); status.Code(err) != c.code {
			t.Errorf("%s: %v, want %v", c.name, err, c.code)
		}
	}
	// a long value under the bound: hashed into a key of 512 bytes or less
	resp, err := s.Call(request("d", 0, entry("k", strings.Repeat("y", 4000))))
	if err != nil || resp.OverallCode != pb.RateLimitResponse_OK {
		t.Fatalf("long value: %v %v", resp, err)
	}
	// hits_addend 2^32-1 on a limit of 5: over, not an error
	resp, err = s.Call(request("d", 4294967295, entry("k", "big")))
	if err != nil || resp.OverallCode != pb.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("huge hits_addend: %v %v", resp, err)
	}
	if code, _ := s.PostJSON(t, strings.Repeat("[", 2<<20)); code != 400 {
		t.Fatalf("a 2 MB body: %d", code)
	}
	if code, _ := s.Get(t, "/healthcheck"); code != 200 {
		t.Fatalf("the server did not survive: %d", code)
	}
}

// rawCodec sends bytes as they are: a malformed protobuf on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)      { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error { *(v.(*[]byte)) = data; return nil }
func (rawCodec) Name() string                       { return "proto" }

func TestMalformedProtobuf(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": "domain: d\n"})
	for _, body := range [][]byte{{0xff, 0xff, 0xff}, {0x0a, 0x80}, {0x12, 0x05, 0x0a}} {
		var out []byte
		err := s.conn.Invoke(context.Background(), "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
			&body, &out, grpc.ForceCodec(rawCodec{}))
		// grpc-go refuses what does not decode (Internal, "error unmarshalling
		// request"); what decodes to a request without a domain is Unknown
		if c := status.Code(err); c != codes.Internal && c != codes.Unknown {
			t.Fatalf("%x: %v", body, err)
		}
		t.Logf("%x: %v", body, err)
	}
	if code, _ := s.Get(t, "/healthcheck"); code != 200 {
		t.Fatalf("the server did not survive: %d", code)
	}
}

// TestStoreSettingsPassThrough: RL_STORE_SETTINGS reaches rl's store (here
// its circuit breaker: two outages in a row open it), and /metrics shows
// rl's store metrics beside the server's.
func TestStoreSettingsPassThrough(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"},
		"RL_STORE_SETTINGS=breaker_failures=2&breaker_cooldown_ms=60000", "REDIS_TIMEOUT=300ms")
	if _, err := s.Call(request("d", 0, entry("k", "v"))); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	for i := 0; i < 3; i++ {
		if _, err := s.Call(request("d", 0, entry("k", "v"))); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d with Redis down: %v", i, err)
		}
	}
	_, metrics := s.Get(t, "/metrics")
	for _, want := range []string{"rl_breaker_opened_total 1", `ratelimit_service_rate_limit_total_hits{domain="d",key="d.k"} 1`, "ratelimit_service_should_rate_limit_redis_error 3"} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics has no %q:\n%s", want, metrics)
		}
	}
}

// TestMetricsCountAsEnvoyRatelimit: hits, within, near (NEAR_LIMIT_RATIO of
// the limit) and over, per stats key, as envoyproxy/ratelimit counts them.
func TestMetricsCountAsEnvoyRatelimit(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": `domain: d
descriptors:
  - key: k
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: s
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: w
    value: "a*"
    detailed_metric: true
    rate_limit: {unit: hour, requests_per_unit: 9}
`})
	for i := 0; i < 5; i++ {
		oneCall(t, s, "k", "v")
	}
	for i := 0; i < 3; i++ {
		oneCall(t, s, "s", "v")
	}
	oneCall(t, s, "w", "abc")
	_, m := s.Get(t, "/metrics")
	for _, want := range []string{
		`ratelimit_service_rate_limit_total_hits{domain="d",key="d.k"} 5`,
		`ratelimit_service_rate_limit_within_limit{domain="d",key="d.k"} 3`,
		`ratelimit_service_rate_limit_near_limit{domain="d",key="d.k"} 1`,
		`ratelimit_service_rate_limit_over_limit{domain="d",key="d.k"} 2`,
		`ratelimit_service_rate_limit_shadow_mode{domain="d",key="d.s"} 2`,
		`ratelimit_service_rate_limit_total_hits{domain="d",key="d.w_abc"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	if t.Failed() {
		t.Log(m)
	}
}

// redisScriptCalls: the script and module calls redis-server has run (and
// not refused).
func redisScriptCalls(t *testing.T, r *redisServer) int {
	t.Helper()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(r.Port), "INFO", "commandstats").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(l, "cmdstat_"), ":calls=")
		if !ok || !(strings.HasPrefix(name, "fcall") || strings.HasPrefix(name, "evalsha") || strings.HasPrefix(name, "rl.")) {
			continue
		}
		c, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		n += c
		if _, failed, ok := strings.Cut(rest, "failed_calls="); ok { // the first, before FUNCTION LOAD
			f, _ := strconv.Atoi(strings.TrimSpace(failed))
			n -= f
		}
	}
	return n
}

func TestLocalCacheAnswersOverLimitInProcess(t *testing.T) {
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 3}\n"},
		"LOCAL_CACHE_SIZE_IN_BYTES=1000")
	awayFromHourEdge()
	for i := 0; i < 10; i++ {
		resp := oneCall(t, s, "k", "v")
		if over := resp.OverallCode == pb.RateLimitResponse_OVER_LIMIT; over != (i >= 3) {
			t.Fatalf("call %d: %v", i+1, resp.OverallCode)
		}
	}
	// the 4th is over on Redis's count; the 5th to the 10th in process
	if n := redisScriptCalls(t, r); n != 4 {
		out, _ := exec.Command("redis-cli", "-p", strconv.Itoa(r.Port), "INFO", "commandstats").Output()
		t.Errorf("%d calls of rl's script, want 4:\n%s", n, out)
	}
	_, m := s.Get(t, "/metrics")
	if want := `ratelimit_service_rate_limit_over_limit_with_local_cache{domain="d",key="d.k"} 6`; !strings.Contains(m, want) {
		t.Errorf("/metrics has no %q:\n%s", want, m)
	}
}
