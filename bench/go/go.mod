module github.com/rl-dev/rl/bench/go

go 1.26.0

require (
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/rl-dev/rl/bindings/go v0.0.0
	github.com/rl-dev/rl/bindings/go/rlgrpc v0.0.0
	google.golang.org/grpc v1.79.0
)

require (
	golang.org/x/net v0.48.0 // indirect
	golang.org/x/text v0.32.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20251202230838-ff82c1b0f217 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

// The binding of this repository and its gRPC interceptors, not published versions.
replace github.com/rl-dev/rl/bindings/go => ../../bindings/go

replace github.com/rl-dev/rl/bindings/go/rlgrpc => ../../bindings/go/rlgrpc
