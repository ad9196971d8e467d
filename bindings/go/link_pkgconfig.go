//go:build rl_pkgconfig

package rl

// With `-tags rl_pkgconfig` the package finds an rl installed by
// `cmake --install` through pkg-config's rl.pc.

// #cgo pkg-config: rl
import "C"
