// The harness's own view of the redis-server a run uses, over a plain RESP
// connection of its own (never rl's): Redis's clock against this host's,
// and what INFO commandstats says the server did.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rl_load {

class RedisProbe {
 public:
  // `url`: redis://[user:password@]host:port[?...]; no password is sent.
  explicit RedisProbe(const std::string& url);
  ~RedisProbe();
  RedisProbe(const RedisProbe&) = delete;
  RedisProbe& operator=(const RedisProbe&) = delete;

  // One command's reply: a bulk or simple string, an integer as text, or an
  // array's elements joined by newlines. Throws on an error reply.
  std::string command(const std::vector<std::string>& args);

  // Redis TIME minus this host's CLOCK_REALTIME, in us, from the sample
  // with the shortest round trip; `uncertainty_us` is half that round trip.
  struct Skew {
    int64_t offset_us = 0;
    int64_t uncertainty_us = 0;
  };
  Skew skew(int samples = 50);

  // Since CONFIG RESETSTAT: the commands clients sent and the us the server
  // spent in them (a script's or transaction's own commands, which
  // commandstats also lists, left out; so are INFO and CONFIG).
  struct Work {
    double calls = 0;
    double usec = 0;
  };
  Work work();

 private:
  std::string read_line();
  std::string read_reply();
  int fd_ = -1;
  std::string buffer_;
};

// CLOCK_REALTIME in us: the clock Redis's TIME reads on this host.
int64_t realtime_us();

}  // namespace rl_load
