//go:build !rl_repo && (dynamic || !(linux && (amd64 || arm64)))

package rl

// With `-tags dynamic`, and on platforms without a bundled library
// (link_bundled.go), the package builds against an installed rl (the
// librl-dev package, or `cmake --install`), found through pkg-config's
// rl.pc; programs load librl.so.1 at run time.

// #cgo pkg-config: rl
import "C"
