#include "args.h"

#include <cmath>

#include "errors.h"

namespace rlnode {
namespace {

// "number", "object", ... as `typeof` would say, for messages.
const char* TypeName(const Napi::Value& value) {
  switch (value.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "boolean";
    case napi_number: return "number";
    case napi_string: return "string";
    case napi_symbol: return "symbol";
    case napi_object: return "object";
    case napi_function: return "function";
    case napi_external: return "external";
    case napi_bigint: return "bigint";
  }
  return "unknown";
}

constexpr double kMaxSafeInteger = 9007199254740991.0;

}  // namespace

// Each reader tries the usual type first and asks napi_typeof only when that
// fails: one N-API call per argument on the hot path, not two.
KeyArg::KeyArg(Napi::Value value, std::string_view what) {
  napi_env env = value.Env();
  size_t length = 0;
  const napi_status status = napi_get_value_string_utf8(env, value, small_, sizeof small_, &length);
  if (status == napi_ok) {
    if (length + 1 < sizeof small_) {
      data_ = small_;
      size_ = length;
      return;
    }
    large_ = value.As<Napi::String>().Utf8Value();
    data_ = large_.data();
    size_ = large_.size();
    return;
  }
  if (status != napi_string_expected) NAPI_THROW_IF_FAILED_VOID(env, status);
  if (value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    auto bytes = value.As<Napi::Uint8Array>();
    data_ = reinterpret_cast<const char*>(bytes.Data());
    size_ = bytes.ByteLength();
    return;
  }
  ThrowTypeError(
      env, std::string(what) + ": must be a string or a Uint8Array/Buffer, not " + TypeName(value));
}

int64_t Int64Arg(Napi::Value value, std::string_view what) {
  double number = 0;
  const napi_status status = napi_get_value_double(value.Env(), value, &number);
  if (status == napi_ok) {
    if (std::trunc(number) != number || std::fabs(number) > kMaxSafeInteger) {
      ThrowTypeError(value.Env(), std::string(what) +
                                      ": must be a safe integer (or a BigInt), not " +
                                      value.ToString().Utf8Value());
    }
    return static_cast<int64_t>(number);
  }
  if (status != napi_number_expected) NAPI_THROW_IF_FAILED(value.Env(), status, 0);
  if (value.IsBigInt()) {
    bool lossless = false;
    const int64_t result = value.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) {
      throw Napi::RangeError::New(value.Env(), std::string(what) + ": " +
                                                   value.ToString().Utf8Value() +
                                                   "n does not fit in a signed 64-bit integer");
    }
    return result;
  }
  ThrowTypeError(value.Env(), std::string(what) + ": must be an integer, not " + TypeName(value));
}

std::string StringArg(Napi::Value value, const std::string& what) {
  if (!value.IsString())
    ThrowTypeError(value.Env(), what + ": must be a string, not " + TypeName(value));
  std::string text = value.As<Napi::String>().Utf8Value();
  // librl reads it as a C string, which would end at a NUL: 'api\0evil'
  // would silently become 'api'. librl's rule refuses it.
  rl_error* err = nullptr;
  ThrowIfFailed(value.Env(), rl_text_check(text.data(), text.size(), what.c_str(), &err), err);
  return text;
}

ConfigArg::ConfigArg(Napi::Value entries, const std::string& what) : cfg_(rl_config_new()) {
  napi_env env = entries.Env();
  if (cfg_ == nullptr) ThrowRlError(env, RL_E_NO_MEMORY, "out of memory");
  if (!entries.IsArray()) {
    rl_config_free(cfg_);
    ThrowTypeError(env, what + ": must be an array of [key, value] strings");
  }
  auto array = entries.As<Napi::Array>();
  try {
    for (uint32_t i = 0; i + 1 < array.Length(); i += 2) {
      const std::string key = StringArg(array.Get(i), what + " key");
      const std::string value = StringArg(array.Get(i + 1), key);
      rl_error* err = nullptr;
      ThrowIfFailed(env, rl_config_set(cfg_, key.c_str(), value.c_str(), &err), err);
    }
  } catch (...) {
    rl_config_free(cfg_);
    throw;
  }
}

}  // namespace rlnode
