#include "errors.h"

#include "addon_data.h"

namespace rlnode {

napi_value TryRlError(napi_env env, int status, const std::string& message) {
  napi_value args[2];
  napi_value undefined = nullptr;
  napi_value error = nullptr;
  if (napi_create_int32(env, status, &args[0]) != napi_ok ||
      napi_create_string_utf8(env, message.data(), message.size(), &args[1]) != napi_ok ||
      napi_get_undefined(env, &undefined) != napi_ok ||
      napi_call_function(env, undefined, DataOf(env).error_of.Value(), 2, args, &error) !=
          napi_ok) {
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
