// Per-environment state of the addon. Node may load the addon into several
// environments (the main thread and each worker_thread); nothing here is
// shared between them, so a worker never touches another's JS objects.
#pragma once

#include <napi.h>

namespace rlnode {

struct AddonData {
  // Handed over by lib/native.js through init():
  // the JS RlError class,
  Napi::FunctionReference rl_error;
  // decisionOf(allowed, limit, remaining, retryAfterUs, resetAfterUs, limitIndex,
  // source, suppressionFactor),
  Napi::FunctionReference decision_of;
  // and the Float64Array(8) a sync call writes its decision into (held by
  // the reference; its memory never moves, so its address is kept too).
  Napi::Reference<Napi::Float64Array> last_decision;
  double* last_decision_data = nullptr;
};

// The calling environment's data (set up when the addon loads into it).
AddonData& DataOf(Napi::Env env);

}  // namespace rlnode
