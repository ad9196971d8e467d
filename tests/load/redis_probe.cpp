#include "redis_probe.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace rl_load {
namespace {

// Whether a command runs others whose time its own includes and which
// INFO commandstats also lists on their own (bench/README.md, "Redis CPU
// per decision").
bool runs_others(const std::string& c) {
  return c == "eval" || c == "evalsha" || c == "eval_ro" || c == "evalsha_ro" || c == "fcall" ||
         c == "fcall_ro" || c == "exec";
}

// Sent by a client even when scripts ran: those, MULTI, SCRIPT and FUNCTION
// subcommands, module commands (which commandstats never nests).
bool entry_command(const std::string& c) {
  return runs_others(c) || c == "multi" || c.rfind("script|", 0) == 0 ||
         c.rfind("function|", 0) == 0 || c.find('.') != std::string::npos;
}

bool harness_command(const std::string& c) {
  return c == "info" || c.rfind("config", 0) == 0 || c == "time" || c == "ping";
}

double field(const std::string& line, const char* name) {
  const size_t at = line.find(name);
  return at == std::string::npos ? 0 : std::atof(line.c_str() + at + std::string(name).size());
}

}  // namespace

int64_t realtime_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

RedisProbe::RedisProbe(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  rest = rest.substr(0, rest.find_first_of("/?"));
  if (const size_t at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  const size_t colon = rest.rfind(':');
  const std::string host = rest.substr(0, colon);
  const std::string port = colon == std::string::npos ? "6379" : rest.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    throw std::runtime_error("cannot resolve the Redis host of " + url);
  }
  fd_ = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  const bool connected = fd_ >= 0 && connect(fd_, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!connected) throw std::runtime_error("cannot connect to the Redis server of " + url);
}

RedisProbe::~RedisProbe() {
  if (fd_ >= 0) close(fd_);
}

std::string RedisProbe::read_line() {
  for (;;) {
    if (const size_t end = buffer_.find("\r\n"); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      return line;
    }
    char chunk[65536];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n <= 0) throw std::runtime_error("the Redis connection closed");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string RedisProbe::read_reply() {
  const std::string line = read_line();
  const std::string body = line.substr(1);
  switch (line.empty() ? '?' : line[0]) {
    case '+':
    case ':': return body;
    case '-': throw std::runtime_error("Redis replied " + body.substr(0, 200));
    case '$': {
      const long n = std::atol(body.c_str());
      if (n < 0) return "";
      while (buffer_.size() < static_cast<size_t>(n) + 2) {
        char chunk[65536];
        const ssize_t got = read(fd_, chunk, sizeof chunk);
        if (got <= 0) throw std::runtime_error("the Redis connection closed");
        buffer_.append(chunk, static_cast<size_t>(got));
      }
      std::string out = buffer_.substr(0, static_cast<size_t>(n));
      buffer_.erase(0, static_cast<size_t>(n) + 2);
      return out;
    }
    case '*': {
      std::string out;
      for (long i = 0, n = std::atol(body.c_str()); i < n; ++i) {
        out += (i ? "\n" : "") + read_reply();
      }
      return out;
    }
    default: throw std::runtime_error("an unexpected Redis reply");
  }
}

std::string RedisProbe::command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  for (size_t sent = 0; sent < out.size();) {
    const ssize_t n = write(fd_, out.data() + sent, out.size() - sent);
    if (n <= 0) throw std::runtime_error("cannot write to Redis");
    sent += static_cast<size_t>(n);
  }
  return read_reply();
}

RedisProbe::Skew RedisProbe::skew(int samples) {
  Skew best{0, -1};
  for (int i = 0; i < samples; ++i) {
    const int64_t before = realtime_us();
    std::istringstream reply(command({"TIME"}));
    const int64_t after = realtime_us();
    int64_t seconds = 0, micros = 0;
    reply >> seconds >> micros;
    const int64_t half = (after - before + 1) / 2;
    if (best.uncertainty_us < 0 || half < best.uncertainty_us) {
      best = {seconds * 1000000 + micros - (before + after) / 2, half};
    }
  }
  return best;
}

RedisProbe::Work RedisProbe::work() {
  struct Line {
    std::string name;
    double calls, usec;
  };
  std::vector<Line> lines;
  bool nested = false;
  std::istringstream info(command({"INFO", "commandstats"}));
  for (std::string line; std::getline(info, line);) {
    const size_t colon = line.find(':');
    if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
    const std::string name = line.substr(8, colon - 8);
    if (harness_command(name)) continue;
    lines.push_back({name, field(line, "calls="), field(line, "usec=")});
    nested = nested || runs_others(name);
  }
  Work w;
  for (const Line& l : lines) {
    if (nested && !entry_command(l.name)) continue;
    w.calls += l.calls;
    w.usec += l.usec;
  }
  return w;
}

}  // namespace rl_load
