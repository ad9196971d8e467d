// Properties every fuzz target asserts, beyond "no crash": a failure is a
// status from the documented set (never RL_E_INTERNAL for bad input), with
// a short, printable message. A broken property aborts, which libFuzzer
// reports as a crash and saves as an input to replay.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "rl/rl.h"

namespace rl_fuzz {

// Longest message a failure may carry (rl quotes input in bounded form).
inline constexpr size_t kMaxMessage = 300;

[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz property broken: %s: '%.*s'\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

inline void check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) fail(what, detail);
}

// Non-empty, under kMaxMessage bytes, printable ASCII only.
inline void check_message(std::string_view message) {
  check(!message.empty(), "a failure has an empty message");
  check(message.size() < kMaxMessage, "message is 300 bytes or longer", message);
  for (const char c : message) {
    check(c >= 0x20 && c < 0x7f, "message holds a byte outside printable ASCII", message);
  }
}

// A call's outcome: RL_OK with no error object, or one of `allowed` with an
// error object whose status matches and whose message passes check_message.
inline void check_outcome(rl_status status, const rl_error* err,
                          std::initializer_list<rl_status> allowed) {
  if (status == RL_OK) {
    check(err == nullptr, "RL_OK came with an error object");
    return;
  }
  check(err != nullptr, "a failure came without an error object");
  check(rl_error_status(err) == status, "the error object's status differs from the returned one");
  bool documented = false;
  for (const rl_status s : allowed) documented = documented || s == status;
  const char* name = rl_status_name(status);
  if (!documented) fail("status outside the documented set", name ? name : "(not a status)");
  check_message(rl_error_message(err));
}

}  // namespace rl_fuzz
