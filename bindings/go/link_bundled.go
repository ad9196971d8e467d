//go:build !rl_repo && !dynamic && linux && (amd64 || arm64)

package rl

// By default, on linux/amd64 and linux/arm64, the package links the static
// librl bundled in this module (internal/native, built by
// scripts/build-static: librl with hiredis, OpenSSL and libstdc++ inside,
// every symbol but rl_* local). A program needs cgo's C compiler and nothing
// else: no librl installed to build, none to load at run time. With
// `-tags dynamic` (and on every other platform) link_pkgconfig.go links the
// installed librl instead.

// #cgo CFLAGS: -I${SRCDIR}/internal/native/include
// #cgo linux,amd64 LDFLAGS: ${SRCDIR}/internal/native/linux_amd64/librl.a -lm -ldl -lpthread
// #cgo linux,arm64 LDFLAGS: ${SRCDIR}/internal/native/linux_arm64/librl.a -lm -ldl -lpthread
import "C"
