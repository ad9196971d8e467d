// The Redis reply reader (core/redis/reply_reader.h), fed arbitrary bytes.
//
// Input: the first byte seeds the chunk sizes (1-16 bytes), the rest is what
// a server sent.
//
// Properties: the replies and the protocol error do not depend on how the
// bytes were chunked; a protocol error is a short printable message; every
// reply is well-formed (at most 8 nested arrays, as in hiredis, arrays within
// kMaxArrayElements, no stray text or elements) and reads back the same once
// written as RESP again; after reset() the reader reads again. And it reads
// as hiredis 0.14's reader (rl's before): the same replies and the same
// error, except where hiredis would wait without end for a reply of any
// announced size, which rl refuses.
#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../tests/unit/hiredis_reply.h"
#include "fuzz_check.h"
#include "redis/reply_reader.h"

namespace {

using rl::redis::from_hiredis;
using rl::redis::Reply;
using rl::redis::ReplyReader;
using rl_fuzz::check;

struct Read {
  std::vector<Reply> replies;
  std::string error;
};

void drain(ReplyReader& reader, Read& out) {
  while (auto reply = reader.next()) out.replies.push_back(std::move(*reply));
  out.error = reader.error();
}

Read read_whole(std::string_view stream) {
  ReplyReader reader;
  Read out;
  reader.feed(stream);
  drain(reader, out);
  return out;
}

Read read_chunked(std::string_view stream, uint8_t seed) {
  ReplyReader reader;
  Read out;
  uint32_t state = seed * 2654435761u + 1;
  while (!stream.empty() && !reader.failed()) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const size_t n = std::min<size_t>(stream.size(), 1 + state % 16);
    reader.feed(stream.substr(0, n));
    stream.remove_prefix(n);
    while (auto reply = reader.next()) out.replies.push_back(std::move(*reply));
  }
  drain(reader, out);
  return out;
}

bool same(const Reply& a, const Reply& b) {
  if (a.type != b.type || a.integer != b.integer || a.text != b.text ||
      a.elements.size() != b.elements.size()) {
    return false;
  }
  for (size_t i = 0; i < a.elements.size(); ++i) {
    if (!same(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

bool same(const std::vector<Reply>& a, const std::vector<Reply>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}

void check_reply(const Reply& r, int depth) {
  // hiredis reads at most 8 nested arrays (it says "depth > 7" past them).
  check(depth <= 8, "a reply inside more than 8 nested arrays");
  switch (r.type) {
    case Reply::Type::status:
    case Reply::Type::error:
    case Reply::Type::string: break;
    case Reply::Type::integer:
    case Reply::Type::nil:
      check(r.text.empty() && r.elements.empty(), "an integer or nil carries text or elements");
      break;
    case Reply::Type::array:
      check(r.elements.size() <= static_cast<size_t>(ReplyReader::kMaxArrayElements),
            "an array above kMaxArrayElements");
      for (const Reply& e : r.elements) check_reply(e, depth + 1);
      break;
    default: rl_fuzz::fail("a reply of no known type");
  }
  if (r.type != Reply::Type::array) check(r.elements.empty(), "a scalar reply has elements");
}

void write_resp(const Reply& r, std::string& out) {
  switch (r.type) {
    case Reply::Type::string:
      out += "$" + std::to_string(r.text.size()) + "\r\n" + r.text + "\r\n";
      break;
    case Reply::Type::status: out += "+" + r.text + "\r\n"; break;
    case Reply::Type::error: out += "-" + r.text + "\r\n"; break;
    case Reply::Type::integer: out += ":" + std::to_string(r.integer) + "\r\n"; break;
    case Reply::Type::nil: out += "$-1\r\n"; break;
    case Reply::Type::array:
      out += "*" + std::to_string(r.elements.size()) + "\r\n";
      for (const Reply& e : r.elements) write_resp(e, out);
      break;
  }
}

// hiredis's reply objects, but an array above kMaxArrayElements is refused
// (hiredis would allocate it whole: gigabytes for *2147483647).
redisReplyObjectFunctions* oracle_functions() {
  static redisReplyObjectFunctions fn = [] {
    redisReader* r = redisReaderCreate();
    redisReplyObjectFunctions f = *r->fn;
    redisReaderFree(r);
    return f;
  }();
  static redisReplyObjectFunctions checked = [] {
    redisReplyObjectFunctions f = fn;
    f.createArray = [](const redisReadTask* task, int elements) -> void* {
      if (elements > ReplyReader::kMaxArrayElements) {
        *static_cast<std::string*>(task->privdata) =
            "protocol error: array of " + std::to_string(elements) + " elements";
        return nullptr;
      }
      return fn.createArray(task, elements);
    };
    return f;
  }();
  return &checked;
}

struct Oracle {
  Read read;
  bool waiting = false;  // readable, and a reply begun or bytes unread
};

Oracle hiredis_read(std::string_view stream) {
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(
      redisReaderCreateWithFunctions(oracle_functions()), redisReaderFree);
  std::string refused;
  reader->privdata = &refused;
  Oracle out;
  redisReaderFeed(reader.get(), stream.data(), stream.size());
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
      out.read.error = refused.empty() ? std::string("protocol error: ") + reader->errstr : refused;
      return out;
    }
    if (raw == nullptr) break;
    out.read.replies.push_back(from_hiredis(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  // A reply begun: an array open, or a type byte read (hiredis keeps
  // rstack[0] set up, typeless, once it looked for a reply in vain).
  const bool begun = reader->ridx > 0 || (reader->ridx == 0 && reader->rstack[0].type >= 0);
  out.waiting = begun || reader->pos != reader->len;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Read whole = read_whole(stream);
  const Read chunked = read_chunked(stream, data[0]);
  check(same(whole.replies, chunked.replies), "chunking changed the replies");
  check(whole.error == chunked.error, "chunking changed the protocol error", chunked.error);
  if (!whole.error.empty()) {
    rl_fuzz::check_message(whole.error);
    check(whole.error.rfind("protocol error: ", 0) == 0, "an error not named a protocol error",
          whole.error);
  }

  const Oracle hiredis = hiredis_read(stream);
  check(same(whole.replies, hiredis.read.replies), "hiredis reads other replies");
  if (whole.error != hiredis.read.error) {
    // Only where hiredis waits for more, and we know none can do.
    check(hiredis.read.error.empty() && hiredis.waiting, "hiredis fails otherwise",
          hiredis.read.error + " / " + whole.error);
  }

  std::string rewritten;
  for (const Reply& r : whole.replies) {
    check_reply(r, 0);
    write_resp(r, rewritten);
  }
  const Read again = read_whole(rewritten);
  check(again.error.empty(), "replies written back as RESP do not read", again.error);
  check(same(whole.replies, again.replies), "replies written back as RESP read differently");

  // Whatever the stream did to it, a reset reader reads a new one.
  ReplyReader reader;
  reader.feed(stream);
  while (reader.next()) {
  }
  reader.reset();
  check(reader.feed(":42\r\n") && !reader.failed(), "a reset reader refuses a new stream");
  const auto reply = reader.next();
  check(reply && reply->type == Reply::Type::integer && reply->integer == 42,
        "a reset reader misreads a new stream");
  return 0;
}
