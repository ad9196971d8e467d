// One asynchronous librl call on its way back to JS: the JS callback to run
// and what librl answered. librl's completion callbacks (on rl's I/O thread)
// fill it in and hand it to its Store, which runs the callback on the JS
// thread.
//
// A decision reaches JS as DecisionFields numbers, in Native.java's order:
//   allowed (0 or 1), limit, remaining, retry_after_us, reset_after_us,
//   source, limit_index, suppression_factor
// as a sync call's `decision` export, a batch's Float64Array (DecisionFields
// per decision) or a callback's arguments after its error.
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rlnode {

class Store;

constexpr size_t DecisionFields = 8;

// The rl_* callback it completes, and so the JS callback's arguments:
// decision: rl_callback: (error, ...the decision's fields), error null on RL_OK
// decisions: rl_batch_callback: (error, Float64Array of the decisions)
// each: rl_batch_each_callback: (Float64Array of the decisions, [status],
//   [error or null]), one of each per request
enum class Answer { decision, decisions, each };

struct PendingCall {
  Store* store = nullptr;
  Answer answer = Answer::decision;
  napi_ref callback = nullptr;
  // A wait's number, by which JS abandons it (0: not a wait).
  uint64_t wait_id = 0;
  // JS gave up on it (waitCancel): it no longer keeps the process alive.
  bool abandoned = false;
  rl_status status = RL_OK;
  std::string message;
  // Answer::decision: held inline, not in `decisions`: a vector was one
  // malloc on rl's thread and its free on the JS thread per call, the
  // pattern glibc's allocator is slowest at.
  rl_decision decision = RL_DECISION_INIT;
  std::vector<rl_decision> decisions;  // Answer::decisions and each
  // Answer::each: each request's status and, when it failed, message.
  std::vector<rl_status> statuses;
  std::vector<std::string> messages;

  // Runs the JS callback. JS thread only, inside a handle scope. False when
  // JS can no longer run in env (a worker being terminated): nothing more
  // is called then, and nothing throws. An exception the callback throws is
  // the process's uncaught exception, as from any other event.
  bool Run(napi_env env);
};

// d's fields into out[0 .. DecisionFields - 1].
void PutDecision(double* out, const rl_decision& d);
// The decisions as one Float64Array, DecisionFields per decision.
Napi::Value DecisionArray(Napi::Env env, const std::vector<rl_decision>& decisions);
// [Float64Array of the decisions, [status], [error or null]]: the arguments
// of an Answer::each callback.
Napi::Array EachArray(Napi::Env env, const std::vector<rl_decision>& decisions,
                      const std::vector<rl_status>& statuses,
                      const std::vector<std::string>& messages);

// librl callbacks; user_data is the PendingCall.
void OnDecision(void* user_data, rl_status status, const rl_decision* decision,
                const rl_error* err);
void OnDecisions(void* user_data, rl_status status, const rl_decision* decisions, size_t count,
                 const rl_error* err);
void OnEach(void* user_data, const rl_decision* decisions, const rl_status* statuses,
            const rl_error* const* errors, size_t count);

}  // namespace rlnode
