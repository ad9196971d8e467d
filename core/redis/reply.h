// One Redis reply, as ReplyReader (reply_reader.h) reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rl::redis {

struct Reply {
  enum class Type { string, array, integer, nil, status, error };
  Type type = Type::nil;
  int64_t integer = 0;
  std::string text;  // string, status or error
  std::vector<Reply> elements;

  bool is_error() const { return type == Type::error; }
};

}  // namespace rl::redis
