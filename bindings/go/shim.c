#include "shim.h"

#include <stdlib.h>

#include "_cgo_export.h"

static void on_call_done(void* user_data, rl_status status, const rl_decision* decision,
                         const rl_error* err) {
  rlgoCompleteCall((uintptr_t)user_data, (int)status, (rl_decision*)decision, (rl_error*)err);
}

static void on_batch_done(void* user_data, rl_status status, const rl_decision* decisions,
                          size_t count, const rl_error* err) {
  rlgoCompleteBatch((uintptr_t)user_data, (int)status, (rl_decision*)decisions, count,
                    (rl_error*)err);
}

static void on_batch_each_done(void* user_data, const rl_decision* decisions,
                               const rl_status* statuses, const rl_error* const* errors,
                               size_t count) {
  rlgoCompleteBatchEach((uintptr_t)user_data, (rl_decision*)decisions, (rl_status*)statuses,
                        (rl_error**)errors, count);
}

static rl_request request_of(const char* key, size_t key_len, int64_t cost, int64_t timeout_us) {
  rl_request request = RL_REQUEST_INIT;
  request.key = key;
  request.key_len = key_len;
  request.cost = cost;
  request.timeout_us = timeout_us;
  return request;
}

rl_status rlgo_call_async(rl_limiter* limiter, int op, const char* key, size_t key_len,
                          int64_t cost, int64_t timeout_us, uintptr_t handle, rl_error** err) {
  const rl_request request = request_of(key, key_len, cost, timeout_us);
  return rl_limiter_call_async(limiter, (rl_op)op, &request, on_call_done, (void*)handle, err);
}

rl_status rlgo_call_sync(rl_limiter* limiter, int op, const char* key, size_t key_len, int64_t cost,
                         int64_t timeout_us, rl_decision* decision, rl_error** err) {
  const rl_request request = request_of(key, key_len, cost, timeout_us);
  switch ((rl_op)op) {
    case RL_OP_ACQUIRE: return rl_limiter_acquire(limiter, &request, decision, err);
    case RL_OP_PEEK: return rl_limiter_peek(limiter, &request, decision, err);
    case RL_OP_REFUND: return rl_limiter_refund(limiter, &request, decision, err);
    default: /* RL_OP_RESET: the Go side passes no other op */
      return rl_limiter_reset(limiter, key, key_len, err);
  }
}

rl_status rlgo_acquire_wait_start(rl_limiter* limiter, const char* key, size_t key_len,
                                  int64_t cost, int64_t wait_us, int64_t timeout_us,
                                  uintptr_t handle, rl_wait** wait, rl_error** err) {
  const rl_request request = request_of(key, key_len, cost, timeout_us);
  return rl_limiter_acquire_wait_start(limiter, &request, wait_us, on_call_done, (void*)handle,
                                       wait, err);
}

rl_status rlgo_batch_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                           uintptr_t handle, rl_error** err) {
  /* Decisions of this rl.h's version: rlgoCompleteBatch steps by sizeof(rl_decision). */
  return rl_limiter_acquire_batch_async_versioned(limiter, requests, count, RL_DECISION_VERSION,
                                                  on_batch_done, (void*)handle, err);
}

rl_status rlgo_batch_each_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                                uintptr_t handle, rl_error** err) {
  /* Decisions of this rl.h's version: rlgoCompleteBatchEach steps by sizeof(rl_decision). */
  return rl_limiter_acquire_batch_each_async(limiter, requests, count, RL_DECISION_VERSION,
                                             on_batch_each_done, (void*)handle, err);
}

rlgo_rendered* rlgo_headers_render(const char* name, const rl_limit_info* limits, size_t count,
                                   int allowed, int64_t remaining, int64_t retry_after_us,
                                   int64_t reset_after_us, int32_t limit_index, int32_t source) {
  rlgo_rendered* rendered = calloc(1, sizeof *rendered);
  if (rendered == NULL) return NULL;
  rl_decision decision = {0};
  decision.version = RL_DECISION_VERSION;
  decision.allowed = allowed;
  decision.remaining = remaining;
  decision.retry_after_us = retry_after_us;
  decision.reset_after_us = reset_after_us;
  decision.limit_index = limit_index;
  decision.source = source;
  rendered->status = rl_headers_render(name, limits, count, &decision, rendered->values,
                                       RL_HEADER_COUNT, &rendered->err);
  return rendered;
}

void rlgo_rendered_free(rlgo_rendered* rendered) {
  if (rendered == NULL) return;
  for (size_t i = 0; i < RL_HEADER_COUNT; i++) rl_string_free(rendered->values[i]);
  free(rendered);
}
