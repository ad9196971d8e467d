// rl writes its commands in RESP itself (core/redis/resp.h): byte for byte
// what hiredis's own formatter writes, for empty, binary and long arguments.
#include "redis/resp.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

namespace rl::redis {
namespace {

std::string hiredis_format(const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* formatted = nullptr;
  const int n = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(),
                                       lengths.data());
  EXPECT_GT(n, 0);
  std::string out(formatted, static_cast<size_t>(n));
  redisFreeCommand(formatted);
  return out;
}

TEST(Resp, WritesWhatHiredisWrites) {
  const std::string binary("a\0b\r\n\xff", 6);
  const std::string long_argument(100'000, 'x');
  const std::vector<std::string> ten(12, "9");
  std::vector<std::vector<std::string_view>> commands = {
      {"PING"},
      {"SET", "k", ""},
      {"FCALL", "rl_gcra_acquire", "1", binary, "1000/1000000"},
      {"FUNCTION", "LOAD", long_argument},
  };
  commands.emplace_back(ten.begin(), ten.end());  // argc of two digits
  for (const auto& args : commands) {
    const std::string ours = format_command(args);
    EXPECT_EQ(ours, hiredis_format(args));
    size_t size = resp_header_size(args.size());
    for (std::string_view a : args) size += resp_argument_size(a.size());
    EXPECT_EQ(ours.size(), size);
  }
}

TEST(Resp, AppendsAfterWhatIsThere) {
  std::string out = "*1\r\n$4\r\nPING\r\n";
  append_resp_header(out, 2);
  append_resp_argument(out, "GET");
  append_resp_argument(out, "k");
  EXPECT_EQ(out, hiredis_format({"PING"}) + hiredis_format({"GET", "k"}));
}

}  // namespace
}  // namespace rl::redis
