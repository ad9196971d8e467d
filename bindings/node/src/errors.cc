#include "errors.h"

#include "addon_data.h"

namespace rlnode {

napi_value TryRlError(napi_env env, int status, const std::string& message) {
  const char* name = rl_status_name(status);
  if (name == nullptr) name = "RL_E_INTERNAL";
  napi_value args[2];
  napi_value error = nullptr;
  if (napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &args[0]) != napi_ok ||
      napi_create_string_utf8(env, message.data(), message.size(), &args[1]) != napi_ok ||
      napi_new_instance(env, DataOf(env).rl_error.Value(), 2, args, &error) != napi_ok) {
    return nullptr;
  }
  return error;
}

Napi::Value MakeRlError(Napi::Env env, int status, const std::string& message) {
  napi_value error = TryRlError(env, status, message);
  if (error == nullptr) throw Napi::Error::New(env);
  return {env, error};
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
