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

#endif
