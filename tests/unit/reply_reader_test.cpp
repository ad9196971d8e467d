// The RESP reader the Redis connection reads with, against hiredis's reader
// (which rl read with before): every reply shape rl gets, and malformed
// streams, give the same replies and the same protocol error, whole, split
// in two at every byte and fed a byte at a time. What hiredis left unbounded
// (arrays, bulk strings and lines of any announced size) is refused at once,
// and a reset reads the next connection's stream.
#include "redis/reply_reader.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "hiredis_reply.h"

namespace rl::redis {
namespace {

struct Read {
  std::vector<Reply> replies;
  std::string error;    // "" while readable
  bool waiting = true;  // readable, with a reply begun or bytes unread
};

// hiredis 0.14's reader, fed `chunks` in order, read after each.
Read hiredis_read(const std::vector<std::string_view>& chunks) {
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(), redisReaderFree);
  Read out;
  for (std::string_view chunk : chunks) {
    redisReaderFeed(reader.get(), chunk.data(), chunk.size());
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
        out.error = std::string("protocol error: ") + reader->errstr;
        out.waiting = false;
        return out;
      }
      if (raw == nullptr) break;
      out.replies.push_back(from_hiredis(static_cast<redisReply*>(raw)));
      freeReplyObject(raw);
    }
  }
  // A reply begun: an array open, or a type byte read (hiredis keeps
  // rstack[0] set up, typeless, once it looked for a reply in vain).
  const bool begun = reader->ridx > 0 || (reader->ridx == 0 && reader->rstack[0].type >= 0);
  out.waiting = begun || reader->pos != reader->len;
  return out;
}

Read our_read(const std::vector<std::string_view>& chunks) {
  ReplyReader reader;
  Read out;
  for (std::string_view chunk : chunks) {
    reader.feed(chunk);
    while (auto reply = reader.next()) out.replies.push_back(std::move(*reply));
    if (reader.failed()) break;
  }
  out.error = reader.error();
  out.waiting = !reader.failed() && !reader.drained();
  return out;
}

std::string show(const Reply& r) {
  std::string out = std::to_string(static_cast<int>(r.type)) + ":" + std::to_string(r.integer) +
                    ":" + r.text + "[";
  for (const Reply& e : r.elements) out += show(e) + ",";
  return out + "]";
}

std::string show(const Read& read) {
  std::string out;
  for (const Reply& r : read.replies) out += show(r) + "\n";
  return out + "error: " + read.error + (read.waiting ? " (waiting)" : "");
}

// Every chunking of `stream`: whole, in two at every byte, a byte at a time.
std::vector<std::vector<std::string_view>> chunkings(std::string_view stream) {
  std::vector<std::vector<std::string_view>> out{{stream}};
  for (size_t at = 1; at < stream.size(); ++at) {
    out.push_back({stream.substr(0, at), stream.substr(at)});
  }
  std::vector<std::string_view> bytes;
  for (size_t at = 0; at < stream.size(); ++at) bytes.push_back(stream.substr(at, 1));
  out.push_back(bytes);
  return out;
}

// Ours reads `stream` as hiredis does, in every chunking.
void expect_as_hiredis(const std::string& stream) {
  const std::string expected = show(hiredis_read({stream}));
  for (const auto& chunks : chunkings(stream)) {
    ASSERT_EQ(show(hiredis_read(chunks)), expected) << "hiredis itself, " << chunks.size();
    ASSERT_EQ(show(our_read(chunks)), expected)
        << testing::PrintToString(stream) << " in " << chunks.size() << " chunks, first "
        << chunks[0].size() << " bytes";
  }
}

std::string bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// lua/'s reply: 8-byte little-endian integers in one string.
std::string packed(std::initializer_list<int64_t> values) {
  std::string out;
  for (int64_t v : values) {
    for (int b = 0; b < 8; ++b) out += static_cast<char>(static_cast<uint64_t>(v) >> (8 * b));
  }
  return out;
}

TEST(ReplyReader, ReadsEveryReplyShapeAsHiredisInAnyChunking) {
  const std::string verdict = bulk(packed({1, 99, 0, 10000, -1}));
  const std::string denied = bulk(packed({0, 100, 0, 250000, 1000000, 0, 250000, 1 << 24}));
  const std::vector<std::string> streams = {
      "+OK\r\n",
      "+PONG\r\n+PONG\r\n:1\r\n",
      "+\r\n",
      "-NOSCRIPT No matching script. Please use EVAL.\r\n",
      "-ERR Function not found\r\n",
      "-ERR Error running script: user_script:1: \r in it\n too\r\n",
      "-READONLY You can't write against a read only replica.\r\n",
      ":0\r\n:1\r\n:-1\r\n:9223372036854775807\r\n:-9223372036854775808\r\n",
      verdict,
      verdict + denied + verdict,
      bulk(""),
      bulk(std::string("a\r\nb\0c\xff", 7)),
      bulk(std::string(5000, 'i')),  // INFO-sized
      "$-1\r\n",
      "*-1\r\n",
      "*0\r\n",
      "*3\r\n" + verdict + denied + "-ERR unexpected\r\n",  // a batch's replies
      "*6\r\n:1\r\n:100\r\n:99\r\n:0\r\n:5\r\n:0\r\n",      // the integers form
      "*2\r\n" + bulk("rl_0123456789ab") + ":1\r\n",
      // CLUSTER SLOTS: ranges with their nodes.
      "*2\r\n*3\r\n:0\r\n:8191\r\n*3\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk("id0") +
          "*4\r\n:8192\r\n:16383\r\n*3\r\n" + bulk("127.0.0.1") + ":7001\r\n" + bulk("id1") +
          "*2\r\n" + bulk("::1") + ":7002\r\n",
      // ROLE, then a sentinel's +switch-master message.
      "*3\r\n" + bulk("master") + ":100\r\n*0\r\n",
      "*3\r\n" + bulk("message") + bulk("+switch-master") + bulk("m 127.0.0.1 1 127.0.0.1 2"),
      "*2\r\n$-1\r\n*-1\r\n",
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n+deep\r\n",  // 8 arrays deep
      "*2\r\n*0\r\n*1\r\n*0\r\n:5\r\n",
      "*5\r\n:1\r\n:10\r\n",  // a reply not all there yet
      verdict.substr(0, 20),
  };
  for (const std::string& s : streams) expect_as_hiredis(s);
}

TEST(ReplyReader, MalformedStreamsFailAsHiredisDoesInAnyChunking) {
  const std::vector<std::string> streams = {
      "u?what\r\n",
      ":1\r\n%2\r\n",  // RESP3's map: rl speaks RESP2
      "_\r\n",
      std::string("\x80", 1),
      std::string("\0", 1),
      "\"",
      "\\",
      "\n",
      "\r\n",
      "\t",
      "\a",
      "\b",
      ":01\r\n",
      ":-0\r\n",
      ":+1\r\n",
      ":\r\n",
      ":-\r\n",
      ":1 \r\n",
      ":9223372036854775808\r\n",
      ":-9223372036854775809\r\n",
      ":18446744073709551616\r\n",
      "$x\r\n",
      "$01\r\nabc\r\n",
      "$-2\r\n",
      "$-9223372036854775808\r\n",
      "*x\r\n",
      "*-2\r\n",
      "*2147483648\r\n",
      "*2\r\n:1\r\n:x\r\n",
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n+too deep\r\n",
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*x",  // too deep before its count
      "+OK\r\n*1\r\n$3\r\nabcXY:7\r\n",  // hiredis skips the 2 bytes after a string
  };
  for (const std::string& s : streams) expect_as_hiredis(s);
}

// What hiredis waited for without end is refused once announced: the same
// message however the bytes come.
void expect_refused(const std::string& stream, const std::string& error) {
  for (const auto& chunks : chunkings(stream)) {
    const Read read = our_read(chunks);
    ASSERT_EQ(read.error, "protocol error: " + error) << testing::PrintToString(stream);
    ASSERT_EQ(read.replies.size(), 1u);  // the reply before it
  }
}

TEST(ReplyReader, RefusesWhatItWouldWaitForWithoutEnd) {
  expect_refused(":1\r\n*2147483647\r\n", "array of 2147483647 elements");
  expect_refused(":1\r\n*" + std::to_string(ReplyReader::kMaxArrayElements + 1) + "\r\n",
                 "array of 1048577 elements");
  expect_refused(":1\r\n$9223372036854775807\r\n", "bulk string of 9223372036854775807 bytes");
  expect_refused(":1\r\n$" + std::to_string(ReplyReader::kMaxBulkBytes + 1) + "\r\n",
                 "bulk string of 536870913 bytes");
  // A number line longer than any number: the message hiredis gives once
  // its end comes, given without waiting for it.
  expect_refused(":1\r\n:" + std::string(22, '1'), "Bad integer value");
  expect_refused(":1\r\n$" + std::string(22, '1'), "Bad bulk string length");
  expect_refused(":1\r\n*" + std::string(22, '1'), "Bad multi-bulk length");
  EXPECT_EQ(our_read({":1\r\n:" + std::string(20, '1')}).error, "");  // may yet end

  const std::string line(ReplyReader::kMaxLineBytes, 'x');
  EXPECT_EQ(show(our_read({"+" + line + "\r\n"})), show(hiredis_read({"+" + line + "\r\n"})));
  const Read status = our_read({":1\r\n+" + line + "xx"});
  EXPECT_EQ(status.error, "protocol error: a status line over 1048576 bytes");
  const Read error = our_read({":1\r\n-" + line + "x\r\n"});
  EXPECT_EQ(error.error, "protocol error: an error line over 1048576 bytes");
}

TEST(ReplyReader, AFailedReaderStaysFailedUntilReset) {
  ReplyReader reader;
  EXPECT_TRUE(reader.feed("*2147483647\r\n"));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.failed());
  EXPECT_FALSE(reader.drained());
  EXPECT_FALSE(reader.feed(":7\r\n"));
  EXPECT_FALSE(reader.next().has_value());
  reader.reset();
  EXPECT_FALSE(reader.failed());
  EXPECT_TRUE(reader.drained());
  ASSERT_TRUE(reader.feed(":7\r\n"));
  auto r = reader.next();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->integer, 7);
  EXPECT_TRUE(reader.drained());
}

TEST(ReplyReader, ResetForgetsAReplyBegun) {
  ReplyReader reader;
  ASSERT_TRUE(reader.feed("*3\r\n:1\r\n$5\r\nab"));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_FALSE(reader.drained());
  reader.reset();
  ASSERT_TRUE(reader.feed("+OK\r\n"));
  auto r = reader.next();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, Reply::Type::status);
  EXPECT_EQ(r->text, "OK");
  EXPECT_TRUE(r->elements.empty());
}

}  // namespace
}  // namespace rl::redis
