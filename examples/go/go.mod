module github.com/rl-dev/rl/examples/go

go 1.24

require github.com/rl-dev/rl/bindings/go v0.0.0

// The binding of this repository, not a published version.
replace github.com/rl-dev/rl/bindings/go => ../../bindings/go
