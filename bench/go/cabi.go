package main

// The floor under the binding: rl's synchronous C call (rl_limiter_acquire)
// made straight through cgo, blocking an OS thread per call. What the Go
// binding adds on top of the core is the difference to this column.

// #cgo CFLAGS: -I${SRCDIR}/../../capi/include
// #cgo LDFLAGS: -L${SRCDIR}/../../build/capi -Wl,-rpath,${SRCDIR}/../../build/capi -lrl
// #include <stdlib.h>
// #include <rl/rl.h>
//
// static rl_status acquire_sync(rl_limiter *limiter, const char *key, size_t key_len) {
//   const rl_request request = {.version = RL_REQUEST_VERSION, .key = key, .key_len = key_len, .cost = 1};
//   rl_decision decision = {.version = RL_DECISION_VERSION};
//   return rl_limiter_acquire(limiter, &request, &decision, NULL);
// }
import "C"

import (
	"context"
	"fmt"
	"unsafe"
)

func openCSync(url string) (allowFunc, func(), error) {
	curl := C.CString(withPrefix(url))
	defer C.free(unsafe.Pointer(curl))
	var store *C.rl_store
	if C.rl_store_open(curl, nil, &store, nil) != C.RL_OK {
		return nil, nil, fmt.Errorf("rl_store_open %s failed", url)
	}
	cfg := C.rl_config_new()
	defer C.rl_config_free(cfg)
	for _, kv := range [][2]string{{"algorithm", "gcra"}, {"limit", fmt.Sprintf("%d/s", rate)}, {"name", "bench"}} {
		k, v := C.CString(kv[0]), C.CString(kv[1])
		C.rl_config_set(cfg, k, v, nil)
		C.free(unsafe.Pointer(k))
		C.free(unsafe.Pointer(v))
	}
	var limiter *C.rl_limiter
	if C.rl_limiter_new(store, cfg, &limiter, nil) != C.RL_OK {
		C.rl_store_free(store)
		return nil, nil, fmt.Errorf("rl_limiter_new failed")
	}
	allow := func(_ context.Context, key string) error {
		ckey := C.CString(key)
		defer C.free(unsafe.Pointer(ckey))
		if st := C.acquire_sync(limiter, ckey, C.size_t(len(key))); st != C.RL_OK {
			return fmt.Errorf("rl_limiter_acquire: %s", C.GoString(C.rl_status_name(C.int(st))))
		}
		return nil
	}
	return allow, func() { C.rl_limiter_free(limiter); C.rl_store_free(store) }, nil
}
