//go:build rl_repo

package rl

// With `-tags rl_repo` the package builds against the rl of this repository:
// the header in capi/include and the library that scripts/build leaves in
// build/capi (found again at run time through the rpath). CGO_CFLAGS and
// CGO_LDFLAGS given in the environment come first, so they can point at
// another build.

// #cgo CFLAGS: -I${SRCDIR}/../../capi/include
// #cgo LDFLAGS: -L${SRCDIR}/../../build/capi -Wl,-rpath,${SRCDIR}/../../build/capi -lrl
import "C"
