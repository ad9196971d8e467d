package rlgrpc_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlgrpc"
)

func open(t *testing.T, url string) *rl.Store {
	t.Helper()
	store, err := rl.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func limiter(t *testing.T, store *rl.Store, name string) *rl.Limiter {
	t.Helper()
	lim, err := store.Limiter(rl.Config{Limit: "5/h", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// A real gRPC server on loopback with the health service behind both
// interceptors, and a client of it.
func serve(t *testing.T, lim *rl.Limiter, opts rlgrpc.Options) healthpb.HealthClient {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(rlgrpc.UnaryServerInterceptor(lim, opts)),
		grpc.ChainStreamInterceptor(rlgrpc.StreamServerInterceptor(lim, opts)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

func check(client healthpb.HealthClient) (codes.Code, metadata.MD, metadata.MD) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var header, trailer metadata.MD
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header), grpc.Trailer(&trailer))
	return status.Code(err), header, trailer
}

func one(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) == 1 {
		return v[0]
	}
	return ""
}

func TestUnaryCallsAreLimitedWithTheFieldsInMetadata(t *testing.T) {
	client := serve(t, limiter(t, open(t, "memory://?clock=manual"), "api"), rlgrpc.Options{})
	for i := 1; i <= 5; i++ {
		code, header, _ := check(client)
		if code != codes.OK {
			t.Fatalf("call %d: %v", i, code)
		}
		if got := one(header, "ratelimit-policy"); got != `"api";q=5;w=3600` {
			t.Errorf("call %d: ratelimit-policy %q", i, got)
		}
		if got, want := one(header, "ratelimit"), fmt.Sprintf(`"api";r=%d;t=%d`, 5-i, i*720); got != want {
			t.Errorf("call %d: ratelimit %q, want %q", i, got, want)
		}
	}
	code, _, trailer := check(client)
	if code != codes.ResourceExhausted {
		t.Fatalf("6th call: %v, want ResourceExhausted", code)
	}
	if retry, err := strconv.Atoi(one(trailer, "retry-after")); err != nil || retry != 720 {
		t.Errorf("6th call: retry-after %q", one(trailer, "retry-after"))
	}
	if one(trailer, "ratelimit") != `"api";r=0;t=3600` {
		t.Errorf("6th call: ratelimit %q", one(trailer, "ratelimit"))
	}
}

func TestStreamsAreLimitedWhenTheyOpen(t *testing.T) {
	client := serve(t, limiter(t, open(t, "memory://?clock=manual"), "watch"), rlgrpc.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 1; i <= 6; i++ {
		stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = stream.Recv()
		}
		want := codes.OK
		if i == 6 {
			want = codes.ResourceExhausted
		}
		if status.Code(err) != want {
			t.Fatalf("stream %d: %v, want %v", i, err, want)
		}
		if i == 6 && one(stream.Trailer(), "retry-after") == "" {
			t.Errorf("stream 6: no retry-after in %v", stream.Trailer())
		}
	}
}

func TestAnOutageIsUnavailableAndSkippedMethodsPass(t *testing.T) {
	store := open(t, "redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0")
	client := serve(t, limiter(t, store, "down"), rlgrpc.Options{})
	if code, _, _ := check(client); code != codes.Unavailable {
		t.Errorf("outage: %v, want Unavailable", code)
	}
	skipping := serve(t, limiter(t, store, "down"), rlgrpc.Options{Skip: func(string) bool { return true }})
	if code, _, _ := check(skipping); code != codes.OK {
		t.Errorf("skipped method: %v", code)
	}
}

func TestTwoServersOnOneRedisShareOneLimit(t *testing.T) {
	url := os.Getenv("RL_TEST_REDIS_URL")
	if url == "" {
		t.Skip("RL_TEST_REDIS_URL is not set (run under scripts/with-redis)")
	}
	name := fmt.Sprintf("grpc%d", time.Now().UnixNano())
	a := serve(t, limiter(t, open(t, url), name), rlgrpc.Options{})
	b := serve(t, limiter(t, open(t, url), name), rlgrpc.Options{})
	var codesSeen []codes.Code
	for i := 0; i < 7; i++ {
		client := a
		if i%2 == 1 {
			client = b
		}
		code, _, _ := check(client)
		codesSeen = append(codesSeen, code)
	}
	want := []codes.Code{codes.OK, codes.OK, codes.OK, codes.OK, codes.OK, codes.ResourceExhausted, codes.ResourceExhausted}
	if fmt.Sprint(codesSeen) != fmt.Sprint(want) {
		t.Errorf("codes %v, want %v", codesSeen, want)
	}
}
