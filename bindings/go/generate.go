package rl

//go:generate go run ./internal/genstatus ../../capi/include/rl/rl.h status_gen.go
