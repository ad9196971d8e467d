// The Redis module's command parser and decision (redis-module/src), as
// RL.ACQUIRE / RL.PEEK / RL.REFUND / RL.RESET / RL.BATCH hand them their
// arguments and the key's stored value, without the server around them
// (tests/redis-module runs the same code inside a real server).
//
// Input: lines. 1: "<algorithm>_<op>" as RL.BATCH names a call; 2: now ('' for
// the server's clock); 3: cost; 4: limits; 5 (optional): the stored value
// (absent: a missing key).
//
// Properties: bad input is a CommandError, "ERR rl: " then a short printable
// message; otherwise a reply of 6 to 8 integers (allowed 0 or 1, retry >=
// -1, reset >= 0; remaining may be negative, as on the Lua path, for a state
// ahead of now: a clock that stepped back), and a value written reads back.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_error.h"
#include "decision.h"
#include "fuzz_check.h"
#include "request.h"

namespace {

using rl_fuzz::check;

std::vector<std::string_view> lines_of(std::string_view in) {
  std::vector<std::string_view> out;
  while (out.size() < 5) {
    const size_t nl = in.find('\n');
    out.push_back(in.substr(0, nl));
    if (nl == std::string_view::npos) break;
    in.remove_prefix(nl + 1);
  }
  return out;
}

void check_error(std::string_view what) {
  check(what.rfind("ERR rl: ", 0) == 0 || what.rfind("WRONGTYPE", 0) == 0,
        "an error starts with ERR rl:", what);
  check(what.size() < 400, "an error is short", what);
  for (char c : what) check(c >= 0x20 && c < 0x7f, "an error is printable", what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::vector<std::string_view> lines = lines_of({reinterpret_cast<const char*>(data), size});
  if (lines.size() < 4) return 0;
  using namespace rl::module;
  try {
    AlgorithmKind algorithm;
    rl::Op op;
    parse_call_name(lines[0], algorithm, op);
    const Request q = parse_request(algorithm, op, lines[1], lines[2], lines[3]);
    if (algorithm == AlgorithmKind::sliding_log) return 0;  // a list: in the server tests
    std::optional<std::string_view> stored;
    if (lines.size() == 5) stored = lines[4];
    const int64_t now = q.now ? *q.now : 1700000000000000;
    const Decision d = decide_string(q, stored, now);
    const Reply& r = d.reply;
    check(r.size >= 6 && r.size <= 8, "a reply has 6 to 8 integers");
    check(r.values[0] == 0 || r.values[0] == 1, "allowed is 0 or 1");
    check(r.values[3] >= -1, "retry is at least -1");
    check(r.values[4] >= 0, "reset is not negative");
    if (d.write.kind == Write::Kind::set) {
      check(!d.write.value.empty(), "a written value is not empty");
      Request again = q;
      again.op = rl::Op::peek;
      const Decision reread = decide_string(again, d.write.value, now);
      check(reread.write.kind == Write::Kind::none, "a peek writes nothing");
    }
  } catch (const CommandError& e) {
    check_error(e.what());
  }
  return 0;
}
