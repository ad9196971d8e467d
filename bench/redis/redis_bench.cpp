// The Redis store against redis-benchmark on the same server, script and
// key space, in one run: one sequential caller (p50/p99 latency), 64 async
// callers (decisions per second), and MEMORY USAGE of an idle key.
//   scripts/with-redis -- build/bench/redis/rl_redis_bench [requests]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "limiter.h"
#include "redis/key_schema.h"
#include "redis/scripts.h"
#include "store.h"

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr int kKeySpace = 100000;  // redis-benchmark -r: keys bench-<12 digits>
constexpr const char* kLimit = "100/s";

std::string shell(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get()) != nullptr) out += buffer;
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::fprintf(stderr, "%s is not set: run under scripts/with-redis\n", name);
    std::exit(1);
  }
  return v;
}

rl::Settings limiter_settings(const std::string& algorithm) {
  rl::Settings s;
  s.set("algorithm", algorithm);
  s.set("limit", kLimit);
  s.set("name", "bench");
  return s;
}

std::string random_key(std::mt19937_64& random) {
  char key[32];
  std::snprintf(key, sizeof key, "%012d", static_cast<int>(random() % kKeySpace));
  return key;
}

struct Latency {
  double p50_us = 0;
  double p99_us = 0;
};

Latency sequential(rl::Limiter& limiter, int n) {
  std::mt19937_64 random(1);
  std::vector<double> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    const std::string key = random_key(random);
    const auto start = SteadyClock::now();
    const rl::Outcome o = limiter.run(rl::Op::acquire, key, 1);
    us.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
    if (o.code != rl::Code::ok) {
      std::fprintf(stderr, "acquire failed: %s\n", o.message.c_str());
      std::exit(1);
    }
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

// `callers` chains of async acquires, each starting its next call from the
// completion of the previous one, until `n` decisions were made.
double concurrent(rl::Limiter& limiter, int callers, int n) {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  std::mutex mutex;
  std::condition_variable all_done;
  std::mt19937_64 random(2);
  std::vector<std::string> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(random_key(random));
  std::function<void()> next = [&] {
    const int i = started++;
    if (i >= n) return;
    limiter.run_async(rl::Call{rl::Op::acquire, keys[i % keys.size()], 1}, [&](rl::Outcome&& o) {
      if (o.code != rl::Code::ok) std::fprintf(stderr, "acquire failed: %s\n", o.message.c_str());
      if (++finished == n) {
        std::lock_guard lock(mutex);
        all_done.notify_one();
      } else {
        next();
      }
    });
  };
  const auto start = SteadyClock::now();
  for (int c = 0; c < callers; ++c) next();
  std::unique_lock lock(mutex);
  all_done.wait(lock, [&] { return finished.load() >= n; });
  return n / std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// redis-benchmark --csv: "EVALSHA ...","rps","avg","min","p50","p95","p99","max"
std::vector<double> redis_benchmark(const std::string& port, const std::string& algorithm,
                                    const std::string& options, int n) {
  const rl::Policy policy = rl::Policy::from(limiter_settings(algorithm));
  const rl::Rate& r = policy.rates[0];
  const auto shape = rl::redis::key_shape("rlbench", policy);
  const auto& script = rl::redis::script_for(policy.algorithm, rl::Op::acquire);
  std::string command = "redis-benchmark -p " + port + " " + options + " -n " + std::to_string(n) +
                        " -r " + std::to_string(kKeySpace) + " --csv EVALSHA " +
                        std::string(script.sha1) + " 1 '" + shape.head + "__rand_int__" +
                        shape.tail + "' '' 1 0 1";
  for (int64_t v :
       {r.limit, r.window_us, r.burst, r.limit_reduced, r.window_reduced, r.granularity_us}) {
    command += " " + std::to_string(v);
  }
  const std::string out = shell(command);
  const size_t line = out.rfind("\"EVALSHA");
  std::vector<double> fields;
  if (line == std::string::npos) {
    std::fprintf(stderr, "redis-benchmark failed:\n%s\n", out.c_str());
    return {0, 0, 0, 0, 0, 0, 0};
  }
  size_t at = out.find("\",\"", line);
  while (at != std::string::npos && at < out.find('\n', line)) {
    fields.push_back(std::atof(out.c_str() + at + 3));
    at = out.find("\",\"", at + 3);
  }
  return fields;  // rps, avg, min, p50, p95, p99, max (ms)
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  const std::string url = env("RL_TEST_REDIS_URL");
  const std::string port = env("RL_TEST_REDIS_PORT");
  auto store = rl::open_store(url + "?prefix=rlbench", {});

  std::printf(
      "Redis store vs redis-benchmark, same server, script and key space (%d keys), limit %s\n",
      kKeySpace, kLimit);
  std::printf("%-12s | %-28s | %10s | %10s | %12s\n", "algorithm", "run", "p50 us", "p99 us",
              "ops/s");
  std::printf(
      "-------------+------------------------------+------------+------------+-------------\n");
  for (const char* algorithm : {"gcra", "sliding_log"}) {
    rl::Limiter limiter(store, limiter_settings(algorithm));
    sequential(limiter, 200);  // loads the script, warms the connection
    const Latency ours = sequential(limiter, n);
    const std::vector<double> theirs1 = redis_benchmark(port, algorithm, "-c 1 -P 1", n);
    std::printf("%-12s | %-28s | %10.1f | %10.1f | %12s\n", algorithm, "rl, 1 caller, sync",
                ours.p50_us, ours.p99_us, "");
    std::printf("%-12s | %-28s | %10.1f | %10.1f | %12.0f\n", algorithm,
                "redis-benchmark -c 1 -P 1", theirs1[3] * 1000, theirs1[5] * 1000, theirs1[0]);
    const double ours64 = concurrent(limiter, 64, n * 5);
    const std::vector<double> theirs64 = redis_benchmark(port, algorithm, "-c 64 -P 16", n * 5);
    std::printf("%-12s | %-28s | %10s | %10s | %12.0f\n", algorithm, "rl, 64 async callers", "", "",
                ours64);
    std::printf("%-12s | %-28s | %10s | %10s | %12.0f\n", algorithm, "redis-benchmark -c 64 -P 16",
                "", "", theirs64[0]);
    std::printf("%-12s | %-28s | p50 ratio %.2fx | throughput ratio %.0f%%\n", algorithm,
                "rl / redis-benchmark", ours.p50_us / (theirs1[3] * 1000),
                100 * ours64 / theirs64[0]);
  }

  std::printf("\nMEMORY USAGE of one idle-but-live key after one acquire (limit 100/1m)\n");
  for (const char* algorithm :
       {"gcra", "token_bucket", "sliding_log", "sliding_window", "fixed_window"}) {
    rl::Settings s = limiter_settings(algorithm);
    s.set("limit", "100/1m");
    s.set("name", "memory");
    rl::Limiter limiter(store, s);
    limiter.run(rl::Op::acquire, "idle-key", 1);
    const std::string key = rl::redis::key_shape("rlbench", limiter.policy()).key_for("idle-key");
    std::printf("%-15s %s bytes  (%s)\n", algorithm,
                shell("redis-cli -p " + port + " memory usage '" + key + "' | tr -d '\\n'").c_str(),
                key.c_str());
  }
  store->close();
  return 0;
}
