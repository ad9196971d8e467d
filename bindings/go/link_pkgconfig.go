//go:build !rl_repo

package rl

// By default the package builds against an installed rl (the librl-dev
// package, or `cmake --install`), found through pkg-config's rl.pc.

// #cgo pkg-config: rl
import "C"
