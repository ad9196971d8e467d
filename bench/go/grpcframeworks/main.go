// bench/frameworks' grpc-go server: unary methods bench.Bench/Bare,
// bench.Bench/Limited (behind rlgrpc's interceptor, keyed on the x-api-key
// metadata; it skips the other two) and bench.Bench/Store, whose answer is
// the microseconds one acquire of the same limiter took (as the interceptor
// makes it), timed in the server. Messages are raw bytes (a codec of its
// own, no protobuf): what bench/frameworks/grpc_client.py sends and reads; a
// request's bytes are its key.
//
//	RL_URL=redis://... grpcframeworks   # prints "listening on 127.0.0.1:PORT"
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rl-dev/rl/bench/go/internal/fwlimiter"
	rl "github.com/rl-dev/rl/bindings/go"
	"github.com/rl-dev/rl/bindings/go/rlgrpc"
)

// rawCodec passes messages as they are: every message is a *[]byte.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" } // what clients send as content-subtype

// unary is a method whose handler answers the request's bytes.
func unary(name string, answer func(ctx context.Context, req []byte) ([]byte, error)) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error,
		interceptor grpc.UnaryServerInterceptor) (any, error) {
		var req []byte
		if err := dec(&req); err != nil {
			return nil, err
		}
		handler := func(ctx context.Context, req any) (any, error) {
			out, err := answer(ctx, *req.(*[]byte))
			return &out, err
		}
		if interceptor == nil {
			return handler(ctx, &req)
		}
		return interceptor(ctx, &req, &grpc.UnaryServerInfo{FullMethod: "/bench.Bench/" + name}, handler)
	}}
}

func main() {
	store, lim, err := fwlimiter.Open(context.Background(), os.Getenv("RL_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	defer lim.Close()

	ok := func(context.Context, []byte) ([]byte, error) { return []byte("ok"), nil }
	desc := grpc.ServiceDesc{ServiceName: "bench.Bench", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		unary("Bare", ok),
		unary("Limited", ok),
		unary("Store", func(ctx context.Context, key []byte) ([]byte, error) {
			began := time.Now()
			// The context rlgrpc acquires with: the same synchronous call.
			if _, err := lim.Acquire(rl.DeadlineOnly(ctx), string(key), 1); err != nil {
				return nil, err
			}
			return strconv.AppendFloat(nil, float64(time.Since(began).Nanoseconds())/1000, 'f', -1, 64), nil
		}),
	}}
	apiKey := func(ctx context.Context, _ string) string {
		if v := metadata.ValueFromIncomingContext(ctx, "x-api-key"); len(v) > 0 {
			return v[0]
		}
		return "anon"
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.ChainUnaryInterceptor(rlgrpc.UnaryServerInterceptor(lim,
		rlgrpc.Options{Key: apiKey, Skip: func(method string) bool { return method != "/bench.Bench/Limited" }})))
	srv.RegisterService(&desc, nil)

	port := os.Getenv("PORT")
	if port == "" {
		port = "0"
	}
	lis, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", lis.Addr())
	log.Fatal(srv.Serve(lis))
}
