// One asynchronous librl call on its way back to JS: the promise to settle
// and what librl answered. librl's completion callbacks (on rl's I/O thread)
// fill it in and hand it to its Store, which settles it on the JS thread.
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rlnode {

class Store;

// What the promise resolves to.
// settled: one { status, value | reason } per request, as Promise.allSettled.
enum class Answer { decision, nothing, decisions, settled };

struct PendingCall {
  Store* store = nullptr;
  Answer answer = Answer::decision;
  napi_deferred deferred = nullptr;
  // A wait's number, by which JS abandons it (0: not a wait).
  uint64_t wait_id = 0;
  // JS gave up on it (an aborted acquireWait): it no longer keeps the
  // process alive, and its promise settles unheard.
  bool abandoned = false;
  rl_status status = RL_OK;
  std::string message;
  // Answer::decision: held inline, not in `decisions`: a vector was one
  // malloc on rl's thread and its free on the JS thread per call, the
  // pattern glibc's allocator is slowest at.
  rl_decision decision = RL_DECISION_INIT;
  std::vector<rl_decision> decisions;  // Answer::decisions and settled
  // Answer::settled: each request's status and, when it failed, message.
  std::vector<rl_status> statuses;
  std::vector<std::string> messages;

  // Resolves or rejects the promise. JS thread only, inside a handle scope.
  // False when JS can no longer run in env (a worker being terminated):
  // nothing is settled then, and nothing throws.
  bool Settle(napi_env env);
};

// The JS decision (lib/decision.js decisionOf) of d.
Napi::Value DecisionObject(Napi::Env env, const rl_decision& d);
// Writes d where lib/decision.js readLastDecision reads it: the fast way
// back for a sync call.
void StoreLastDecision(Napi::Env env, const rl_decision& d);
Napi::Array DecisionArray(Napi::Env env, const std::vector<rl_decision>& decisions);
// [{ status: 'fulfilled', value: decision } | { status: 'rejected', reason:
// RlError }, ...]: request i's result from decisions[i] or statuses[i] and
// messages[i].
Napi::Array SettledArray(Napi::Env env, const std::vector<rl_decision>& decisions,
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
