// Per-environment state of the addon. Node may load the addon into several
// environments (the main thread and each worker_thread); nothing here is
// shared between them, so a worker never touches another's JS objects.
#pragma once

#include <napi.h>

namespace rlnode {

struct AddonData {
  // errorOf(status, message): what a failed call throws, or hands its
  // callback. lib/native.js gives it through init() (the JS error class is
  // lib's choice, not the addon's).
  Napi::FunctionReference error_of;
  // The `decision` export: the rl_decision out-parameter of every sync
  // call, a Float64Array of DecisionFields (pending_call.h). Held by the
  // reference; its memory never moves, so its address is kept too.
  Napi::Reference<Napi::Float64Array> decision;
  double* decision_data = nullptr;
};

// The calling environment's data (set up when the addon loads into it).
AddonData& DataOf(Napi::Env env);

}  // namespace rlnode
