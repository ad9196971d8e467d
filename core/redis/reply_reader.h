// The RESP2 reply reader, without I/O: fed whatever bytes a socket read, in
// any chunking, it yields complete replies as rl::redis::Reply values, or a
// protocol error once the stream cannot be read. One per connection; reset
// for a new one.
//
// It parses straight into Reply, resuming where the last bytes ended: a
// reply costs the allocations of its own strings and arrays, nothing else
// (hiredis's reader built its reply objects first, to be copied and freed).
// It reads what hiredis 0.14 reads, with its error messages, and bounds what
// hiredis did not: the size of an array, of a bulk string, of a line.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "reply.h"

namespace rl::redis {

class ReplyReader {
 public:
  // Most elements an array reply may announce. rl's replies hold a handful;
  // a larger count is a broken stream, refused before anything is allocated.
  static constexpr long long kMaxArrayElements = 1 << 20;
  // Arrays inside arrays, as in hiredis: a reply within more is refused.
  static constexpr int kMaxDepth = 8;
  // Longest bulk string: Redis's own default (proto-max-bulk-len). Longer is
  // refused once announced, not waited for.
  static constexpr long long kMaxBulkBytes = 512ll << 20;
  // Longest status or error line; a longer one is refused once that many
  // bytes came without its end.
  static constexpr size_t kMaxLineBytes = 1 << 20;

  ReplyReader() = default;
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
  bool drained() const { return !failed() && depth_ == 0 && pos_ == buffer_.size(); }

 private:
  enum class Item { done, more, failed };

  // Reads the item at pos_ into `out`: a scalar, or an array whose `count`
  // elements follow.
  Item read_item(Reply& out, long long& count);
  // `item` is read: into the innermost open array, or the reply itself,
  // opened while its elements follow. True when it completed the reply.
  bool place(Reply&& item, long long count);
  void fail(std::string_view why);

  std::string buffer_;  // bytes fed and not yet read, from pos_
  size_t pos_ = 0;
  // The reply being read while arrays are open (depth_ > 0); open_[i] is
  // the array at depth i and how many elements it still awaits. Each is the
  // last element of the one before, which grows only once it is complete.
  Reply root_;
  struct Open {
    Reply* array;
    long long left;
  };
  std::array<Open, kMaxDepth> open_{};
  int depth_ = 0;
  std::string error_;
};

}  // namespace rl::redis
