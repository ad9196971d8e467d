// A gRPC server limited per client IP by rl's interceptors (rlgrpc): the
// standard health service stands in for an application's service, so the
// example needs no generated code.
//
//	go run -tags rl_repo ./grpc-server -store memory:// -limit 5/10s -addr 127.0.0.1:50051
//	grpcurl -plaintext 127.0.0.1:50051 grpc.health.v1.Health/Check   # the sixth within 10s: RESOURCE_EXHAUSTED
//
// A denied call is RESOURCE_EXHAUSTED with ratelimit-policy, ratelimit and
// retry-after in its trailers; with -store redis://... every instance shares
// the limit, and a Redis outage is UNAVAILABLE (-on-failure closed) or lets
// calls through (open).
package main

import (
	"context"
	"flag"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlgrpc"
)

// newServer is the whole integration: one limiter, two interceptors.
func newServer(lim *rl.Limiter) *grpc.Server {
	server := grpc.NewServer(
		grpc.UnaryInterceptor(rlgrpc.UnaryServerInterceptor(lim, rlgrpc.Options{})),
		grpc.StreamInterceptor(rlgrpc.StreamServerInterceptor(lim, rlgrpc.Options{})),
	)
	healthpb.RegisterHealthServer(server, health.NewServer())
	return server
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "listen address")
	storeURL := flag.String("store", "memory://", "rl store URL")
	limit := flag.String("limit", "5/10s", "calls per window per client")
	onFailure := flag.String("on-failure", "closed", "what a store outage gives: closed, open or local")
	flag.Parse()

	store, err := rl.Open(context.Background(), *storeURL)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lim, err := store.Limiter(rl.Config{Algorithm: rl.GCRA, Limit: *limit, Name: "grpc-example",
		OnFailure: rl.OnFailure(*onFailure)})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()

	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (limit %s per client)", lis.Addr(), *limit)
	log.Fatal(newServer(lim).Serve(lis))
}
