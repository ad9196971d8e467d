// hiredis's reply object as rl's Reply: the reference the reply reader is
// checked against (tests/unit/reply_reader_test.cpp, fuzz/fuzz_reply_reader.cpp).
#pragma once

#include <hiredis/hiredis.h>

#include "redis/reply.h"

namespace rl::redis {

inline Reply from_hiredis(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = Reply::Type::string; break;
    case REDIS_REPLY_STATUS: out.type = Reply::Type::status; break;
    case REDIS_REPLY_ERROR: out.type = Reply::Type::error; break;
    case REDIS_REPLY_INTEGER: out.type = Reply::Type::integer; break;
    case REDIS_REPLY_ARRAY: out.type = Reply::Type::array; break;
    default: out.type = Reply::Type::nil; break;
  }
  if (r->str != nullptr) out.text.assign(r->str, r->len);
  out.integer = r->integer;
  for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(from_hiredis(r->element[i]));
  return out;
}

}  // namespace rl::redis
