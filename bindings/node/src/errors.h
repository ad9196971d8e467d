// Turning C failures into JS errors: errorOf(status, message), the function
// lib/native.js hands to init(), for an rl_status; TypeError for a JS value
// of the wrong type (caught before anything reaches C).
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <string>

namespace rlnode {

// errorOf(status, message).
Napi::Value MakeRlError(Napi::Env env, int status, const std::string& message);
// The same without exceptions: nullptr when JS cannot run (a worker being
// terminated), where node-addon-api would abort the process building its
// own error.
napi_value TryRlError(napi_env env, int status, const std::string& message);

// Throws errorOf(status, message of err) (err is freed) when status is not
// RL_OK. err is read by reference, after the call that fills it has run:
// ThrowIfFailed(env, rl_call(..., &err), err).
void ThrowIfFailed(Napi::Env env, rl_status status, rl_error*& err);

[[noreturn]] void ThrowRlError(Napi::Env env, int status, const std::string& message);
[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);

}  // namespace rlnode
