// What an error reply of Redis means for the caller: a server that is
// loading, busy or read-only may come back, and one short of the replicas
// its min-replicas-to-write asks for may get them back (unavailable); wrong or missing
// credentials are an auth failure; anything else is an error of the backend.
#pragma once

#include <string_view>

#include "error.h"

namespace rl::redis {

inline bool starts_with_any(std::string_view text,
                            std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (text.substr(0, p.size()) == p) return true;
  }
  return false;
}

inline Code code_of_error_reply(std::string_view text) {
  if (starts_with_any(text, {"LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN",
                             "NOREPLICAS"}))
    return Code::backend_unavailable;
  if (starts_with_any(text, {"WRONGPASS", "NOAUTH", "NOPERM", "ERR invalid password", "ERR AUTH"}))
    return Code::auth;
  return Code::backend_error;
}

}  // namespace rl::redis
