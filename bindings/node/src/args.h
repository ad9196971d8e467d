// Reading JS arguments into C values. Every check here runs before any call
// into librl, and a value of the wrong JS type is a TypeError that names the
// argument. Range checks (empty key, negative cost, ...) are left to librl so
// that every binding reports them with the same rl_status and message.
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace rlnode {

// A key's bytes: the UTF-8 of a string, or the contents of a Uint8Array
// (Buffer included), which are borrowed for the duration of the call.
// `what` names the argument in a TypeError. (Every name here is a
// string_view: a decision is cheap enough that building the names as
// std::strings per call showed in its profile.)
class KeyArg {
 public:
  KeyArg(Napi::Value value, std::string_view what);
  KeyArg(const KeyArg&) = delete;
  KeyArg& operator=(const KeyArg&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  // Fits the UTF-8 of any key librl accepts, with room to spare; longer
  // strings go to large_ so that librl can still report their real length.
  char small_[4 * RL_MAX_KEY_LEN];
  std::string large_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// An int64: a Number that is a safe integer, or a BigInt that fits in 64 bits.
int64_t Int64Arg(Napi::Value value, std::string_view what);

// A string librl reads as a C string: one holding a NUL byte is refused
// (RL_E_INVALID_ARG naming `what`, by librl's rl_text_check) rather than cut
// short at it.
std::string StringArg(Napi::Value value, const std::string& what);

// An rl_config built from a flat array [key1, value1, key2, value2, ...] of
// strings, applied in order; freed with the object.
class ConfigArg {
 public:
  ConfigArg(Napi::Value entries, const std::string& what);
  ~ConfigArg() { rl_config_free(cfg_); }
  ConfigArg(const ConfigArg&) = delete;
  ConfigArg& operator=(const ConfigArg&) = delete;

  const rl_config* get() const { return cfg_; }

 private:
  rl_config* cfg_;
};

}  // namespace rlnode
