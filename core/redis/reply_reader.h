// The RESP reply reader, without I/O: fed whatever bytes a socket read, in
// any chunking, it yields complete replies as rl::redis::Reply values, or a
// protocol error once the stream cannot be read. One per connection; reset
// for a new one. hiredis does the parsing; this class owns its reader.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "reply.h"

struct redisReader;

namespace rl::redis {

class ReplyReader {
 public:
  // Most elements an array reply may announce. rl's replies hold a handful;
  // a larger count is a broken stream, refused before anything is allocated.
  static constexpr long long kMaxArrayElements = 1 << 20;

  ReplyReader();
  ~ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;

  // Appends bytes. False once the stream is broken (error() says how).
  bool feed(std::string_view bytes);
  // The next complete reply; nullopt when more bytes are needed, or when the
  // stream is broken (then failed() is true and stays so until reset()).
  std::optional<Reply> next();

  bool failed() const { return !error_.empty(); }
  // "protocol error: ..." (printable, under 200 bytes); "" while readable.
  const std::string& error() const { return error_; }
  // Forgets buffered bytes and any error: the stream of a new connection.
  void reset();
  // Nothing buffered and no reply begun: every byte fed was read as replies.
  bool drained() const;

  // Called by hiredis while it parses (reply_reader.cpp): why an array was
  // refused, reported by next() as the protocol error.
  void refuse(std::string why) { refused_ = std::move(why); }

 private:
  void fail(std::string_view why);

  redisReader* reader_ = nullptr;
  std::string error_;
  std::string refused_;
};

}  // namespace rl::redis
