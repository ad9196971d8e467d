// The RESP reader the Redis connection reads with: replies in any chunking,
// a huge announced array refused before anything is allocated, and a reset
// for the next connection.
#include "redis/reply_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace rl::redis {
namespace {

TEST(ReplyReader, ReadsRepliesInAnyChunking) {
  const std::string stream = "*6\r\n:1\r\n:100\r\n:99\r\n:0\r\n:5\r\n:0\r\n+OK\r\n-NOSCRIPT x\r\n";
  for (size_t chunk : {size_t{1}, size_t{3}, stream.size()}) {
    ReplyReader reader;
    std::vector<Reply> replies;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      ASSERT_TRUE(reader.feed(std::string_view(stream).substr(at, chunk)));
      while (auto r = reader.next()) replies.push_back(std::move(*r));
    }
    ASSERT_EQ(replies.size(), 3u) << chunk;
    EXPECT_EQ(replies[0].elements.size(), 6u);
    EXPECT_EQ(replies[0].elements[1].integer, 100);
    EXPECT_EQ(replies[1].text, "OK");
    EXPECT_TRUE(replies[2].is_error());
    EXPECT_FALSE(reader.failed());
  }
}

TEST(ReplyReader, AHugeArrayIsAProtocolErrorAndResetRecovers) {
  ReplyReader reader;
  reader.feed("*2147483647\r\n");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_TRUE(reader.failed());
  EXPECT_NE(reader.error().find("protocol error"), std::string::npos) << reader.error();
  reader.reset();
  EXPECT_FALSE(reader.failed());
  ASSERT_TRUE(reader.feed(":7\r\n"));
  auto r = reader.next();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->integer, 7);
}

}  // namespace
}  // namespace rl::redis
