package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rl "github.com/rl-dev/rl/bindings/go"
)

// The example's server on loopback, on the test Redis when there is one:
// five calls pass, the sixth is RESOURCE_EXHAUSTED with the fields.
func TestTheSixthCallIsResourceExhausted(t *testing.T) {
	url := os.Getenv("RL_TEST_REDIS_URL")
	if url == "" {
		url = "memory://"
	}
	ctx := context.Background()
	store, err := rl.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	name := "grpc-example-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	lim, err := store.Limiter(rl.Config{Algorithm: rl.GCRA, Limit: "5/1m", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := newServer(lim)
	go func() { _ = server.Serve(lis) }()
	defer server.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for i := 1; i <= 6; i++ {
		var trailer metadata.MD
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
		if i <= 5 && err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 6 {
			if status.Code(err) != codes.ResourceExhausted || len(trailer.Get("retry-after")) != 1 ||
				trailer.Get("ratelimit-policy")[0] != `"`+name+`";q=5;w=60` {
				t.Fatalf("call 6: %v, trailers %v", err, trailer)
			}
		}
	}
}
