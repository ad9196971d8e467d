/* C helpers of the Go binding: they build rl_request values on the C side
 * and route completions to the exported Go functions (native.go), with
 * the cgo.Handle of the waiting Go call carried as user data. */
#ifndef RL_GO_SHIM_H
#define RL_GO_SHIM_H

#include <rl/rl.h>
#include <stdint.h>

/* rl_limiter_call_async for one key; the key is copied by rl before this
 * returns. timeout_us is the request's deadline (0: the store's). handle is
 * the cgo.Handle of the waiting Go call. */
rl_status rlgo_call_async(rl_limiter* limiter, int op, const char* key, size_t key_len,
                          int64_t cost, int64_t timeout_us, uintptr_t handle, rl_error** err);

/* The synchronous call of op (rl_limiter_acquire, _peek, _refund; _reset,
 * which takes no deadline) for one key: it returns with the answer in
 * *decision (initialised by the caller) or an error. */
rl_status rlgo_call_sync(rl_limiter* limiter, int op, const char* key, size_t key_len, int64_t cost,
                         int64_t timeout_us, rl_decision* decision, rl_error** err);

/* rl_limiter_acquire_wait_start, completing into rlgoCompleteCall; *wait
 * receives the handle to cancel it by (rl_wait_cancel). */
rl_status rlgo_acquire_wait_start(rl_limiter* limiter, const char* key, size_t key_len,
                                  int64_t cost, int64_t wait_us, int64_t timeout_us,
                                  uintptr_t handle, rl_wait** wait, rl_error** err);

/* rl_limiter_acquire_batch_async_versioned (RL_DECISION_VERSION) completing into
 * rlgoCompleteBatch. */
rl_status rlgo_batch_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                           uintptr_t handle, rl_error** err);

/* rl_limiter_acquire_batch_each_async (RL_DECISION_VERSION) completing into
 * rlgoCompleteBatchEach. */
rl_status rlgo_batch_each_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                                uintptr_t handle, rl_error** err);

/* What rlgo_headers_render answers: librl's status, its error, and the
 * field values (NULL where a field is not sent). */
typedef struct rlgo_rendered {
  rl_status status;
  rl_error* err;
  char* values[RL_HEADER_COUNT];
} rlgo_rendered;

/* rl_headers_render of one decision, given field by field, for a limiter
 * whose name and limits the caller keeps in C memory. The answer is one
 * allocation (NULL when memory ran out), freed with rlgo_rendered_free
 * (the values too, not the error). Nothing of Go's memory crosses: no cgo
 * pointer checks, nothing escapes to Go's heap. */
rlgo_rendered* rlgo_headers_render(const char* name, const rl_limit_info* limits, size_t count,
                                   int allowed, int64_t remaining, int64_t retry_after_us,
                                   int64_t reset_after_us, int32_t limit_index, int32_t source);
void rlgo_rendered_free(rlgo_rendered* rendered);

#endif
