module github.com/rl-dev/rl/examples/go

go 1.24.0

require (
	github.com/rl-dev/rl/bindings/go v0.0.0
	github.com/rl-dev/rl/bindings/go/rlgrpc v0.0.0
	google.golang.org/grpc v1.79.0
)

require (
	golang.org/x/net v0.48.0 // indirect
	golang.org/x/sys v0.39.0 // indirect
	golang.org/x/text v0.32.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20251202230838-ff82c1b0f217 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

// The binding of this repository, not a published version.
replace github.com/rl-dev/rl/bindings/go => ../../bindings/go

// rlgrpc of this repository (the gRPC example).
replace github.com/rl-dev/rl/bindings/go/rlgrpc => ../../bindings/go/rlgrpc
