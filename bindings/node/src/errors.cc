#include "errors.h"

#include "addon_data.h"

namespace rlnode {

Napi::Value MakeRlError(Napi::Env env, int status, const std::string& message) {
  const char* name = rl_status_name(status);
  return DataOf(env).rl_error.New({Napi::String::New(env, name != nullptr ? name : "RL_E_INTERNAL"),
                                   Napi::String::New(env, message)});
}

void ThrowIfFailed(Napi::Env env, rl_status status, rl_error*& err) {
  if (status == RL_OK) return;
  const std::string message = rl_error_message(err);
  rl_error_free(err);
  ThrowRlError(env, status, message);
}

void ThrowRlError(Napi::Env env, int status, const std::string& message) {
  throw Napi::Error(env, MakeRlError(env, status, message));
}

void ThrowTypeError(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

}  // namespace rlnode
