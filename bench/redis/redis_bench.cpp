// rl's Redis store, through the C ABI, beside redis-benchmark and beside
// itself, against one redis-server. Every measure prints one JSON line:
//   rl_redis_bench latency ALGORITHM [REQUESTS]     one synchronous caller (p50, p99)
//                                                   vs redis-benchmark -c 1 -P 1
//   rl_redis_bench throughput ALGORITHM [REQUESTS]  64 async callers (decisions/s)
//                                                   vs redis-benchmark -c 64 -P 16
//   rl_redis_bench sliding-log CALLS N...           Redis CPU per decision on a
//                                                   sliding_log key of N entries, per N
//   rl_redis_bench idle-memory                      MEMORY USAGE of one idle key
//   rl_redis_bench deny-cache SECONDS               one key offered 20x its limit by
//                                                   64 paced callers, cache off and on
//   rl_redis_bench cluster CALLS                    Redis CPU per decision and rate on
//                                                   one server, a master with a replica
//                                                   and redis+cluster:// (1 and 64
//                                                   callers); each master's share
//   rl_redis_bench min-replicas [CALLS]             the cost of min_replicas=1 on the
//                                                   Sentinel fixture's master and its
//                                                   replica: p50/p99 per decision, 1 and
//                                                   16 callers (prints a table)
//   rl_redis_bench module-cost [CALLS]              Redis CPU per decision (INFO
//                                                   commandstats usec / decisions), one
//                                                   caller, per algorithm: rl's Redis
//                                                   module vs the Lua library (a server
//                                                   with the module: docs/redis-module.md)
//   rl_redis_bench module [CALLS]                   the module against its peers:
//                                                   Redis CPU per decision (module,
//                                                   functions, redis-cell), decisions
//                                                   per second per Redis core (RL.BATCH)
//   rl_redis_bench sync-callers [THREADS [CALLS [PAUSE_S]]]
//                                                   THREADS (default 64) synchronous
//                                                   gcra callers: decisions/s, p50/p99
//                                                   (for perf stat's counts per decision)
//   rl_redis_bench                                  latency and throughput of gcra
//                                                   and sliding_log, idle-memory
// Run it under scripts/with-redis. redis-benchmark replays the command rl
// itself sent (captured with SLOWLOG), so both run the same script with the
// same arguments whatever the scripts become. RL_BENCH_STORE_OPTIONS (URL
// query settings, e.g. "timeout_ms=5000") is appended to rl's store URL.
#include <rl/rl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr int kKeySpace = 100000;  // keys of 12 digits, as redis-benchmark -r makes them
constexpr const char* kLimit = "100/s";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "rl_redis_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) fail(std::string(name) + " is not set: run under scripts/with-redis");
  return v;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get()) != nullptr) out += buffer;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// redis-cli on the bench's server; arguments are quoted for the shell.
// redis-cli on a server of scripts/with-redis; `password` empty: no AUTH.
std::string cli_with(const std::string& port, const std::string& password,
                     const std::vector<std::string>& args) {
  std::string command = "redis-cli -p " + port;
  if (!password.empty()) command += " -a " + shell_quote(password) + " --no-auth-warning";
  for (const std::string& a : args) command += " " + shell_quote(a);
  return shell(command);
}

std::string redis_cli(const std::vector<std::string>& args) {
  return cli_with(env("RL_TEST_REDIS_PORT"), "", args);
}

// Whether a command runs others whose time its own includes and which
// INFO commandstats also lists on their own (a script's redis.call, a
// transaction's queued commands).
bool runs_others(const std::string& command) {
  return command == "eval" || command == "evalsha" || command == "eval_ro" ||
         command == "evalsha_ro" || command == "fcall" || command == "fcall_ro" ||
         command == "exec";
}

// Whether a command was sent by a client rather than run by a script or a
// transaction, when some ran (`nested`): those, MULTI, SCRIPT and FUNCTION
// subcommands and module commands (which commandstats never nests).
bool entry_command(const std::string& command) {
  return runs_others(command) || command == "multi" || command.rfind("script|", 0) == 0 ||
         command.rfind("function|", 0) == 0 || command.find('.') != std::string::npos;
}

// Microseconds redis-server (the main one, or the one on `port`) spent in
// commands since CONFIG RESETSTAT, but for the bench's own (INFO, CONFIG,
// SLOWLOG, MEMORY, SCAN). When scripts or transactions ran, only the
// commands clients sent count (entry_command): the others' time is already
// in theirs. bench/README.md: "Redis CPU per decision".
double server_usec(const std::string& port = "") {
  const std::string info = port.empty() ? redis_cli({"INFO", "commandstats"})
                                        : cli_with(port, "", {"INFO", "commandstats"});
  std::vector<std::pair<std::string, double>> commands;
  bool nested = false;
  for (const std::string& line : lines_of(info)) {
    const size_t colon = line.find(':');
    if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
    const std::string command = line.substr(8, colon - 8);
    if (command == "info" || command == "config" || command.rfind("slowlog", 0) == 0 ||
        command.rfind("memory", 0) == 0 || command == "scan") {
      continue;
    }
    const size_t at = line.find("usec=");
    if (at != std::string::npos) commands.emplace_back(command, std::atof(line.c_str() + at + 5));
    nested = nested || runs_others(command);
  }
  double usec = 0;
  for (const auto& [command, u] : commands) {
    if (!nested || entry_command(command)) usec += u;
  }
  return usec;
}

// rl's C ABI, with every failure fatal.
class Limiter {
 public:
  Limiter(rl_store* store, const std::vector<std::pair<std::string, std::string>>& settings) {
    rl_config* cfg = rl_config_new();
    for (const auto& [k, v] : settings) check(rl_config_set(cfg, k.c_str(), v.c_str(), &err_));
    check(rl_limiter_new(store, cfg, &limiter_, &err_));
    rl_config_free(cfg);
  }
  ~Limiter() { rl_limiter_free(limiter_); }
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  rl_decision acquire(const std::string& key) {
    rl_request request = RL_REQUEST_INIT;
    request.key = key.data();
    request.key_len = key.size();
    request.cost = 1;
    rl_decision decision{};
    decision.version = RL_DECISION_VERSION;
    check(rl_limiter_acquire(limiter_, &request, &decision, &err_));
    return decision;
  }
  rl_limiter* handle() { return limiter_; }

 private:
  void check(rl_status status) {
    if (status == RL_OK) return;
    fail(std::string(rl_status_name(status)) + ": " + (err_ ? rl_error_message(err_) : ""));
  }
  rl_limiter* limiter_ = nullptr;
  rl_error* err_ = nullptr;
};

struct Store {
  explicit Store(const std::string& prefix, const std::string& settings = "") {
    std::string url = env("RL_TEST_REDIS_URL") + "?prefix=" + prefix;
    if (!settings.empty()) url += "&" + settings;
    if (const char* options = std::getenv("RL_BENCH_STORE_OPTIONS"); options && *options) {
      url += std::string("&") + options;
    }
    rl_error* err = nullptr;
    if (rl_store_open(url.c_str(), nullptr, &store, &err) != RL_OK) {
      fail(std::string("rl_store_open: ") + (err ? rl_error_message(err) : ""));
    }
  }
  ~Store() { rl_store_free(store); }
  rl_store* store = nullptr;
};

std::string unique_prefix(const std::string& what) {
  return "rlbench" + std::to_string(getpid()) + what;
}

std::string random_key(std::mt19937_64& random) {
  char key[32];
  std::snprintf(key, sizeof key, "%012d", static_cast<int>(random() % kKeySpace));
  return key;
}

double percentile(std::vector<double>& sorted, int p) {
  return sorted[std::min(sorted.size() - 1, sorted.size() * p / 100)];
}

// The arguments of the command that rl sends for one acquire of `key`: the
// slow log keeps every command's arguments when its threshold is 0.
// `port`: the server's (empty: the main one).
std::vector<std::string> capture_command(Limiter& limiter, const std::string& key,
                                         const std::string& port = "") {
  auto cli = [&](const std::vector<std::string>& args) {
    return port.empty() ? redis_cli(args) : cli_with(port, "", args);
  };
  const std::string threshold = lines_of(cli({"CONFIG", "GET", "slowlog-log-slower-than"})).back();
  cli({"CONFIG", "SET", "slowlog-log-slower-than", "0"});
  cli({"SLOWLOG", "RESET"});
  limiter.acquire(key);
  // Non-interactive redis-cli prints one field per line: id, time, duration,
  // the arguments, client address, client name.
  std::vector<std::string> entry = lines_of(cli({"SLOWLOG", "GET", "1"}));
  cli({"CONFIG", "SET", "slowlog-log-slower-than", threshold});
  if (entry.size() < 6) fail("no command in the slow log");
  return {entry.begin() + 3, entry.end() - 2};
}

// redis-benchmark --csv: "NAME","rps","avg","min","p50","p95","p99","max" (ms).
struct BenchmarkResult {
  double per_second, p50_us, p99_us, redis_us_per_call;
};
// `port`: the server's (empty: the main one).
BenchmarkResult redis_benchmark(const std::vector<std::string>& command, const std::string& key,
                                const std::string& options, int n, const std::string& port = "") {
  const std::string at = port.empty() ? env("RL_TEST_REDIS_PORT") : port;
  std::string line = "redis-benchmark -p " + at + " " + options + " -n " + std::to_string(n) +
                     " -r " + std::to_string(kKeySpace) + " --csv";
  for (std::string arg : command) {
    // The captured key becomes a random one of the same key space.
    if (const size_t at = arg.find(key); at != std::string::npos) {
      arg.replace(at, key.size(), "__rand_int__");
    }
    line += " " + shell_quote(arg);
  }
  cli_with(at, "", {"CONFIG", "RESETSTAT"});
  const std::vector<std::string> out = lines_of(shell(line));
  // An error reply counts as a request for redis-benchmark: refuse any.
  const std::string errors = cli_with(at, "", {"INFO", "errorstats"});
  if (errors.find("errorstat_") != std::string::npos) {
    fail("redis-benchmark's replay of rl's command got errors:\n" + errors + line);
  }
  for (const std::string& row : out) {
    std::vector<double> fields;
    for (size_t at = row.find("\",\""); at != std::string::npos; at = row.find("\",\"", at + 3)) {
      fields.push_back(std::atof(row.c_str() + at + 3));
    }
    if (fields.size() == 7 && row.rfind("\"test\"", 0) != 0) {
      return {fields[0], fields[3] * 1000, fields[5] * 1000, server_usec(at) / n};
    }
  }
  fail("redis-benchmark failed:\n" + shell(line));
}

std::vector<std::pair<std::string, std::string>> limiter_settings(const std::string& algorithm,
                                                                  const std::string& limit,
                                                                  const std::string& name) {
  return {{"algorithm", algorithm}, {"limit", limit}, {"name", name}};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// One synchronous caller, keys drawn from the key space, beside
// redis-benchmark -c 1 -P 1 replaying the same command, in rounds: a change
// in this machine's speed during the run (a busy neighbour, a slower
// minute) then falls on both sides alike instead of on whichever ran at
// that time. Which side goes first alternates from round to round: on this
// VM the side that ran first in each round read faster (rl's p50 over
// redis-benchmark's 0.50-0.88x with rl always first, 0.86-1.17x with it
// always second). Each side's p50 and p99 are the medians of its rounds'
// (redis-benchmark reports them per run only).
void latency(const std::string& algorithm, int n) {
  constexpr int kRounds = 10;
  Store store(unique_prefix("lat"));
  Limiter limiter(store.store, limiter_settings(algorithm, kLimit, "bench"));
  std::mt19937_64 random(1);
  for (int i = 0; i < 200; ++i) limiter.acquire(random_key(random));  // loads the script
  const std::string captured_key = "000000000042";
  const std::vector<std::string> command = capture_command(limiter, captured_key);
  const int calls = std::max(1, n / kRounds);
  std::vector<double> rl_p50, rl_p99, peer_p50, peer_p99;
  double rl_usec = 0, peer_usec = 0;
  std::vector<double> us;
  us.reserve(calls);
  auto rl_round = [&] {
    redis_cli({"CONFIG", "RESETSTAT"});
    us.clear();
    for (int i = 0; i < calls; ++i) {
      const std::string key = random_key(random);
      const auto start = SteadyClock::now();
      limiter.acquire(key);
      us.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
    }
    rl_usec += server_usec();
    std::sort(us.begin(), us.end());
    rl_p50.push_back(percentile(us, 50));
    rl_p99.push_back(percentile(us, 99));
  };
  auto peer_round = [&] {
    const BenchmarkResult peer = redis_benchmark(command, captured_key, "-c 1 -P 1", calls);
    peer_p50.push_back(peer.p50_us);
    peer_p99.push_back(peer.p99_us);
    peer_usec += peer.redis_us_per_call * calls;
  };
  for (int round = 0; round < kRounds; ++round) {
    if (round % 2 == 0) {
      rl_round();
      peer_round();
    } else {
      peer_round();
      rl_round();
    }
  }
  const int total = calls * kRounds;
  // Redis CPU per call of both: alike when the replay does rl's work.
  std::printf(
      "{\"bench\":\"c_latency\",\"algorithm\":\"%s\",\"calls\":%d,\"rounds\":%d,"
      "\"rl_p50_us\":%.1f,\"rl_p99_us\":%.1f,\"peer_p50_us\":%.1f,\"peer_p99_us\":%.1f,"
      "\"rl_redis_us_per_decision\":%.2f,\"peer_redis_us_per_call\":%.2f}\n",
      algorithm.c_str(), total, kRounds, median(rl_p50), median(rl_p99), median(peer_p50),
      median(peer_p99), rl_usec / total, peer_usec / total);
}

// `callers` chains of async acquires, each starting its next call from the
// completion of the previous one, until n decisions were made.
struct Chains {
  Limiter* limiter = nullptr;
  int n = 0;
  std::vector<std::string> keys;
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  std::mutex mutex;
  std::condition_variable all_done;

  void next() {
    const int i = started++;
    if (i >= n) return;
    const std::string& key = keys[i % keys.size()];
    rl_request request = RL_REQUEST_INIT;
    request.key = key.data();
    request.key_len = key.size();
    request.cost = 1;
    rl_error* err = nullptr;
    if (rl_limiter_acquire_async(limiter->handle(), &request, &Chains::done, this, &err) != RL_OK) {
      fail(std::string("rl_limiter_acquire_async: ") + rl_error_message(err));
    }
  }
  static void done(void* self, rl_status status, const rl_decision*, const rl_error* err) {
    auto* chains = static_cast<Chains*>(self);
    if (status != RL_OK) fail(std::string("acquire failed: ") + rl_error_message(err));
    if (++chains->finished == chains->n) {
      std::lock_guard lock(chains->mutex);
      chains->all_done.notify_one();
    } else {
      chains->next();
    }
  }
};

void throughput(const std::string& algorithm, int n) {
  Store store(unique_prefix("thr"));
  Limiter limiter(store.store, limiter_settings(algorithm, kLimit, "bench"));
  Chains chains;
  chains.limiter = &limiter;
  chains.n = n;
  std::mt19937_64 random(2);
  for (int i = 0; i < 4096; ++i) chains.keys.push_back(random_key(random));
  limiter.acquire(chains.keys[0]);  // loads the script
  const auto start = SteadyClock::now();
  for (int c = 0; c < 64; ++c) chains.next();
  {
    std::unique_lock lock(chains.mutex);
    chains.all_done.wait(lock, [&] { return chains.finished.load() >= n; });
  }
  const double ours = n / std::chrono::duration<double>(SteadyClock::now() - start).count();
  const std::string captured_key = "000000000042";
  const BenchmarkResult peer =
      redis_benchmark(capture_command(limiter, captured_key), captured_key, "-c 64 -P 16", n);
  std::printf(
      "{\"bench\":\"c_throughput\",\"algorithm\":\"%s\",\"calls\":%d,\"rl_per_second\":%.0f,"
      "\"peer_per_second\":%.0f}\n",
      algorithm.c_str(), n, ours, peer.per_second);
}

// One server's counts over a run, from INFO commandstats, stats and cpu
// (CONFIG RESETSTAT before; CPU, which it does not reset, as a difference):
// counts that do not depend on the machine's load, beside the time.
// Script commands (FCALL, EVALSHA, EVAL, RL.*): their time includes the
// commands their Lua calls, which commandstats also lists on their own.
struct NodeCounts {
  double usec = 0;
  double script_calls = 0;   // one per decision, or per coalesced batch
  double called_by_lua = 0;  // GET, SET, ...: what the scripts' redis.call ran
  double client_other = 0;   // CLUSTER, PING, ASKING, READONLY, FUNCTION, WAIT...
  double bytes_in = 0;       // from clients (total_net_input_bytes)
  double bytes_out = 0;      // to clients (total_net_output_bytes)
  double cpu_seconds = 0;    // used_cpu_sys + used_cpu_user (process)
  std::string other_names;   // the client_other commands, "name=calls,..."
};
double info_number(const std::string& line, const std::string& field) {
  const size_t at = line.find(field + "=");
  return at == std::string::npos ? 0 : std::atof(line.c_str() + at + field.size() + 1);
}
NodeCounts node_counts(const std::string& info) {
  NodeCounts counts;
  for (const std::string& line : lines_of(info)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon);
    const double value = std::atof(line.c_str() + colon + 1);
    if (name == "total_net_input_bytes") counts.bytes_in = value;
    if (name == "total_net_output_bytes") counts.bytes_out = value;
    if (name == "used_cpu_sys" || name == "used_cpu_user") counts.cpu_seconds += value;
    if (line.rfind("cmdstat_", 0) != 0) continue;
    const std::string command = name.substr(8);
    const double calls = info_number(line, "calls");
    if (runs_others(command) || command.rfind("rl.", 0) == 0) {
      counts.usec += info_number(line, "usec");
      counts.script_calls += calls;
    } else if (command.rfind("cluster", 0) == 0 || command == "ping" || command == "asking" ||
               command == "readonly" || command.rfind("function", 0) == 0 || command == "wait" ||
               command == "hello" || command.rfind("client", 0) == 0 || command == "select") {
      counts.client_other += calls;
      char entry[96];
      std::snprintf(entry, sizeof entry, "%s%s=%.0f", counts.other_names.empty() ? "" : ",",
                    command.c_str(), calls);
      counts.other_names += entry;
    } else if (command != "info" && command != "config|resetstat" && command != "auth") {
      counts.called_by_lua += calls;  // the bench's own INFO, CONFIG and AUTH are left out
    }
  }
  return counts;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// `n` gcra decisions over `keys` keys from `callers` chains (1: one caller
// waiting for each answer), on the store at `url`; decisions per second.
double decide_from(const std::string& url, int callers, int n, int keys) {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  if (rl_store_open(url.c_str(), nullptr, &store, &err) != RL_OK) {
    fail(std::string("rl_store_open: ") + rl_error_message(err));
  }
  double per_second = 0;
  {
    Limiter limiter(store, limiter_settings("gcra", kLimit, "bench"));
    Chains chains;
    chains.limiter = &limiter;
    chains.n = n;
    std::mt19937_64 random(3);
    for (int i = 0; i < keys; ++i) chains.keys.push_back(random_key(random));
    const auto start = SteadyClock::now();
    for (int c = 0; c < callers; ++c) chains.next();
    {
      std::unique_lock lock(chains.mutex);
      chains.all_done.wait(lock, [&] { return chains.finished.load() >= n; });
    }
    per_second = n / std::chrono::duration<double>(SteadyClock::now() - start).count();
  }
  rl_store_free(store);
  return per_second;
}

// One deployment of scripts/with-redis: its URL, and the masters whose
// commandstats add up to its Redis CPU.
struct Deployment {
  const char* name;
  std::string url;
  std::vector<std::string> masters;
  std::string password;
};

// The same decisions on one server, on a master with a replica (Sentinel's,
// addressed directly) and on the cluster: Redis CPU per decision (summed
// over the masters) and how the cluster's decisions fall on its masters.
// Over 4,096 keys (spread over every master) and on one key (one master:
// what a node costs when its caches are its own).
void cluster(int n) {
  const char* extra = std::getenv("RL_BENCH_STORE_OPTIONS");
  std::string options = extra != nullptr && *extra != '\0' ? std::string("&") + extra : "";
  // The Lua path's figures: bench/run's module server (scripts/with-redis
  // with RL_TEST_REDIS_MODULE) loads rl's module into these nodes too.
  if (options.find("script_mode=") == std::string::npos) options += "&script_mode=functions";
  const std::string data_pw = env("RL_TEST_SENTINEL_DATA_PASSWORD");
  const std::string sentinel_master = words(env("RL_TEST_SENTINEL_NODE_PORTS")).at(0);
  std::vector<std::string> masters;
  for (const std::string& port : words(env("RL_TEST_CLUSTER_PORTS"))) {
    if (cli_with(port, env("RL_TEST_CLUSTER_PASSWORD"), {"ROLE"}).rfind("master", 0) == 0) {
      masters.push_back(port);
    }
  }
  const std::vector<Deployment> deployments{
      {"standalone", env("RL_TEST_REDIS_URL") + "?", {env("RL_TEST_REDIS_PORT")}, ""},
      {"replicated",
       "redis://:" + data_pw + "@127.0.0.1:" + sentinel_master + "?",
       {sentinel_master},
       data_pw},
      {"cluster", env("RL_TEST_CLUSTER_URL") + "?", masters, env("RL_TEST_CLUSTER_PASSWORD")},
  };
  for (const auto& [callers, keys] : {std::pair{1, 4096}, {64, 4096}, {1, 1}, {64, 1}}) {
    for (const Deployment& d : deployments) {
      const std::string tag =
          std::string(d.name).substr(0, 3) + std::to_string(callers) + "k" + std::to_string(keys);
      // Warm: the library loaded on every node, the connections made.
      decide_from(d.url + "prefix=" + unique_prefix("w" + tag) + options, callers, 2000, 4096);
      std::vector<double> cpu_before;
      for (const std::string& port : d.masters) {
        cli_with(port, d.password, {"CONFIG", "RESETSTAT"});
        cpu_before.push_back(node_counts(cli_with(port, d.password, {"INFO", "cpu"})).cpu_seconds);
      }
      const double rate =
          decide_from(d.url + "prefix=" + unique_prefix(tag) + options, callers, n, keys);
      std::vector<NodeCounts> per_master;
      NodeCounts sum;
      for (size_t m = 0; m < d.masters.size(); ++m) {
        per_master.push_back(node_counts(
            cli_with(d.masters[m], d.password, {"INFO", "commandstats", "stats", "cpu"})));
        NodeCounts& c = per_master.back();
        c.cpu_seconds -= cpu_before[m];
        sum.usec += c.usec;
        sum.script_calls += c.script_calls;
        sum.called_by_lua += c.called_by_lua;
        sum.client_other += c.client_other;
        sum.bytes_in += c.bytes_in;
        sum.bytes_out += c.bytes_out;
        sum.cpu_seconds += c.cpu_seconds;
      }
      // Per master: its share of the script calls, and per decision of the
      // whole run its commands, bytes and other commands.
      std::string shares;
      std::string nodes;
      double largest = 0;
      for (size_t m = 0; m < per_master.size(); ++m) {
        const NodeCounts& c = per_master[m];
        const double share = sum.script_calls > 0 ? c.script_calls / sum.script_calls : 0.0;
        // The decisions' share: a batch is one script call of many
        // decisions, but each decision runs its own Lua commands.
        largest =
            std::max(largest, sum.called_by_lua > 0 ? c.called_by_lua / sum.called_by_lua : share);
        char entry[512];
        std::snprintf(entry, sizeof entry, "%s%.3f", shares.empty() ? "" : ",", share);
        shares += entry;
        std::snprintf(entry, sizeof entry,
                      "%s{\"port\":%s,\"script_calls\":%.0f,\"bytes_in_per_decision\":%.1f,"
                      "\"bytes_out_per_decision\":%.1f,\"redis_us_per_decision\":%.2f,"
                      "\"other\":\"%s\"}",
                      nodes.empty() ? "" : ",", d.masters[m].c_str(), c.script_calls,
                      c.bytes_in / n, c.bytes_out / n, c.usec / n, c.other_names.c_str());
        nodes += entry;
      }
      std::printf(
          "{\"bench\":\"cluster\",\"deployment\":\"%s\",\"callers\":%d,\"keys\":%d,"
          "\"calls\":%d,\"masters\":%zu,\"redis_us_per_decision\":%.2f,\"per_second\":%.0f,"
          "\"decisions_per_script_call\":%.2f,\"lua_commands_per_decision\":%.2f,"
          "\"other_commands_per_decision\":%.4f,\"bytes_in_per_decision\":%.1f,"
          "\"bytes_out_per_decision\":%.1f,\"process_cpu_us_per_decision\":%.2f,"
          "\"largest_master_share\":%.3f,\"master_shares_of_script_calls\":[%s],"
          "\"per_master\":[%s]}\n",
          d.name, callers, keys, n, d.masters.size(), sum.usec / n, rate,
          sum.script_calls > 0 ? n / sum.script_calls : 0.0, sum.called_by_lua / n,
          sum.client_other / n, sum.bytes_in / n, sum.bytes_out / n, sum.cpu_seconds * 1e6 / n,
          largest, shares.c_str(), nodes.c_str());
    }
  }
}

// MEMORY USAGE summed over the keys that start with prefix.
double memory_usage(const std::string& prefix) {
  double bytes = 0;
  for (const std::string& key : lines_of(redis_cli({"--scan", "--pattern", prefix + "*"}))) {
    bytes += std::atof(redis_cli({"MEMORY", "USAGE", key, "SAMPLES", "0"}).c_str());
  }
  return bytes;
}

// One key of limit N/1h per N, filled with N entries (one acquire each, in
// turn: every entry has its own instant). Then rounds of acquires on each
// key in turn (denied: the keys are full), each round's Redis CPU per
// decision measured alone; the median round is printed. Beside it, MEMORY
// USAGE of the key and of a sorted set of N timestamps (the usual Redis log).
struct FullLog {
  int entries;
  std::string prefix;
  std::unique_ptr<Store> store;
  std::unique_ptr<Limiter> limiter;
  std::vector<double> usec_per_decision;
};

void sliding_log(int calls, const std::vector<int>& entries) {
  constexpr int kRounds = 5;
  const std::string key = "full";
  std::vector<FullLog> logs;
  for (int n : entries) {
    FullLog& log = logs.emplace_back();
    log.entries = n;
    log.prefix = unique_prefix("sl" + std::to_string(n) + "x");
    log.store = std::make_unique<Store>(log.prefix);
    log.limiter = std::make_unique<Limiter>(
        log.store->store, limiter_settings("sliding_log", std::to_string(n) + "/1h", "log"));
    for (int i = 0; i < n; ++i) {
      if (!log.limiter->acquire(key).allowed) fail("a log filled up before " + std::to_string(i));
    }
    if (log.limiter->acquire(key).allowed) fail("a log is not full after its limit");
  }
  const int per_round = std::max(1, calls / kRounds);
  for (int round = 0; round < kRounds; ++round) {
    for (FullLog& log : logs) {
      redis_cli({"CONFIG", "RESETSTAT"});
      for (int i = 0; i < per_round; ++i) log.limiter->acquire(key);
      log.usec_per_decision.push_back(server_usec() / per_round);
    }
  }
  for (FullLog& log : logs) {
    const std::string zset = log.prefix + "-zset";
    redis_cli({"EVAL",
               "local t = redis.call('TIME') local now = t[1] * 1000000 + t[2] "
               "for i = 1, tonumber(ARGV[1]) do local at = now - i "
               "redis.call('ZADD', KEYS[1], at, at) end",
               "1", zset, std::to_string(log.entries)});
    std::sort(log.usec_per_decision.begin(), log.usec_per_decision.end());
    std::printf(
        "{\"bench\":\"sliding_log\",\"entries\":%d,\"calls\":%d,\"redis_us_per_decision\":%.2f,"
        "\"memory_bytes\":%.0f,\"zset_memory_bytes\":%.0f}\n",
        log.entries, per_round * kRounds, percentile(log.usec_per_decision, 50),
        memory_usage(log.prefix + ":"), memory_usage(zset));
    redis_cli({"DEL", zset});
  }
}

// Redis CPU per decision of the module and of the Lua library (Functions),
// one caller, each algorithm; 5 rounds, the median. The server must have
// the module loaded (RL_TEST_REDIS_URL and RL_TEST_REDIS_PORT naming it).
void module_cost(int calls) {
  constexpr int kRounds = 5;
  const int per_round = std::max(1, calls / kRounds);
  for (const char* algorithm :
       {"gcra", "token_bucket", "fixed_window", "sliding_window", "sliding_log", "suppressed"}) {
    double usec[2] = {0, 0};
    const char* modes[2] = {"module", "functions"};
    for (int m = 0; m < 2; ++m) {
      Store store(unique_prefix(std::string("mc") + algorithm + modes[m]),
                  std::string("script_mode=") + modes[m] + "&coalesce=off");
      Limiter limiter(store.store, limiter_settings(algorithm, "1000000/s", "cost"));
      std::mt19937_64 random(1);
      for (int i = 0; i < 1000; ++i) limiter.acquire(random_key(random));  // warm up
      std::vector<double> rounds;
      for (int round = 0; round < kRounds; ++round) {
        redis_cli({"CONFIG", "RESETSTAT"});
        for (int i = 0; i < per_round; ++i) limiter.acquire(random_key(random));
        rounds.push_back(server_usec() / per_round);
      }
      std::sort(rounds.begin(), rounds.end());
      usec[m] = percentile(rounds, 50);
    }
    std::printf(
        "{\"bench\":\"module_cost\",\"algorithm\":\"%s\",\"calls\":%d,"
        "\"module_redis_us_per_decision\":%.2f,\"lua_redis_us_per_decision\":%.2f,"
        "\"ratio\":%.2f}\n",
        algorithm, per_round * kRounds, usec[0], usec[1], usec[1] > 0 ? usec[0] / usec[1] : 0);
  }
}

// The port of a redis:// URL ("redis://127.0.0.1:PORT").
std::string port_of(const std::string& url) {
  const size_t colon = url.rfind(':');
  if (colon == std::string::npos) fail("no port in " + url);
  return url.substr(colon + 1, url.find_first_of("/?", colon) - colon - 1);
}

// `n` acquires of `algorithm` (limit 10^6/s: never denied) over 10,000 keys
// from `in_flight` chains (1: one caller waiting for each answer; more:
// the store coalesces the calls that wait) on the store at `url`, after as
// many to warm up: decisions/s and the server's CPU per decision.
struct StoreRun {
  double per_second, redis_us_per_decision;
};
StoreRun decide_on(const std::string& url, const std::string& port, const std::string& algorithm,
                   int in_flight, int n) {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  if (rl_store_open(url.c_str(), nullptr, &store, &err) != RL_OK) {
    fail(std::string("rl_store_open: ") + rl_error_message(err));
  }
  StoreRun run{};
  {
    Limiter limiter(store, limiter_settings(algorithm, "1000000/s", "mod"));
    std::mt19937_64 random(5);
    std::vector<std::string> keys;
    for (int i = 0; i < 10000; ++i) keys.push_back(random_key(random));
    auto chain = [&](int calls) {
      Chains chains;
      chains.limiter = &limiter;
      chains.n = calls;
      chains.keys = keys;
      const auto start = SteadyClock::now();
      for (int c = 0; c < in_flight; ++c) chains.next();
      std::unique_lock lock(chains.mutex);
      chains.all_done.wait(lock, [&] { return chains.finished.load() >= calls; });
      return calls / std::chrono::duration<double>(SteadyClock::now() - start).count();
    };
    chain(std::min(n, 2000));  // the connection made, the library or module found
    cli_with(port, "", {"CONFIG", "RESETSTAT"});
    run.per_second = chain(n);
    run.redis_us_per_decision = server_usec(port) / n;
  }
  rl_store_free(store);
  return run;
}

// The store URL of the module's server for one measure.
std::string module_url(const std::string& what, const std::string& settings) {
  std::string url =
      env("RL_TEST_REDIS_MODULE_URL") + "?prefix=" + unique_prefix(what) + "&" + settings;
  if (const char* options = std::getenv("RL_BENCH_STORE_OPTIONS"); options && *options) {
    url += std::string("&") + options;
  }
  return url;
}

// The module's figures against its peers (bench/README.md), on the server
// with rl's module (RL_TEST_REDIS_MODULE_URL):
// - Redis CPU per decision and decisions/s, each algorithm, through rl's
//   store with script_mode=module and with functions (the Lua library), 1
//   and 200 calls in flight (coalesced into RL.BATCH or the batch FCALL);
// - redis-cell's CL.THROTTLE by redis-benchmark at 1 and 200 in flight, on
//   the server at RL_BENCH_CELL_PORT (bench/redis/redis-cell.sh builds it;
//   unset: a "skipped" line with RL_BENCH_CELL_WHY);
// - decisions per second per Redis core: redis-benchmark pipelining
//   RL.BATCH of 64 gcra acquires, beside the Lua library's batch FCALL of 64
//   sent the same way, and rl's store with 1,000 calls in flight, module
//   against functions: decisions/s and 1 / (Redis CPU per decision).
void module_figures(int n) {
  const std::string port = port_of(env("RL_TEST_REDIS_MODULE_URL"));
  auto emit_store = [](const char* bench, const std::string& algorithm, const char* mode,
                       int in_flight, const StoreRun& r) {
    std::printf(
        "{\"bench\":\"%s\",\"algorithm\":\"%s\",\"script_mode\":\"%s\",\"in_flight\":%d,"
        "\"per_second\":%.0f,\"redis_us_per_decision\":%.3f,\"per_core\":%.0f}\n",
        bench, algorithm.c_str(), mode, in_flight, r.per_second, r.redis_us_per_decision,
        r.redis_us_per_decision > 0 ? 1e6 / r.redis_us_per_decision : 0);
  };
  for (const char* algorithm :
       {"gcra", "token_bucket", "fixed_window", "sliding_window", "sliding_log"}) {
    for (int in_flight : {1, 200}) {
      for (const char* mode : {"module", "functions"}) {
        const std::string tag = std::string("m") + algorithm + mode + std::to_string(in_flight);
        emit_store("module_cpu", algorithm, mode, in_flight,
                   decide_on(module_url(tag, std::string("script_mode=") + mode), port, algorithm,
                             in_flight, n));
      }
    }
  }

  // redis-cell: GCRA in one module command, never denied (burst and rate 10^6/s).
  const char* cell = std::getenv("RL_BENCH_CELL_PORT");
  if (cell == nullptr || *cell == '\0') {
    const char* why = std::getenv("RL_BENCH_CELL_WHY");
    std::printf("{\"bench\":\"skipped\",\"source\":\"cell\",\"why\":\"%s\"}\n",
                why != nullptr && *why != '\0' ? why : "RL_BENCH_CELL_PORT not set");
  } else {
    const std::vector<std::string> throttle{
        "CL.THROTTLE", "cell:000000000042", "1000000", "1000000", "1", "1"};
    for (int in_flight : {1, 200}) {
      const BenchmarkResult r = redis_benchmark(
          throttle, "000000000042", "-c " + std::to_string(in_flight) + " -P 1", n, cell);
      std::printf(
          "{\"bench\":\"cell\",\"in_flight\":%d,\"per_second\":%.0f,"
          "\"redis_us_per_decision\":%.3f}\n",
          in_flight, r.per_second, r.redis_us_per_call);
    }
  }

  // RL.MANY (what rl's store sends for one limiter's coalesced calls; RL.BATCH
  // too, as "module_rl_batch") and the batch FCALL of 64 gcra acquires, each
  // made of the command rl sends for one acquire (captured from the slow log), pipelined
  // by redis-benchmark (4 connections, 8 commands each in flight), CALLS / 4
  // commands.
  constexpr int kBatch = 64;
  const std::string key = "000000000042";
  auto capture = [&](const char* mode) {
    rl_store* s = nullptr;
    rl_error* err = nullptr;
    const std::string url =
        module_url(std::string("cap") + mode, std::string("script_mode=") + mode + "&coalesce=off");
    if (rl_store_open(url.c_str(), nullptr, &s, &err) != RL_OK) {
      fail(std::string("rl_store_open: ") + rl_error_message(err));
    }
    std::vector<std::string> command;
    {
      Limiter limiter(s, limiter_settings("gcra", "1000000/s", "batch"));
      limiter.acquire(key);  // the module or the library found
      command = capture_command(limiter, key, port);
    }
    rl_store_free(s);
    return command;
  };
  // RL.ACQUIRE key gcra now cost limits: RL.BATCH takes key gcra_acquire now cost limits.
  const std::vector<std::string> acquire = capture("module");
  if (acquire.size() != 6 || acquire[0] != "RL.ACQUIRE") {
    fail("the module store did not send RL.ACQUIRE key algorithm now cost limits: " +
         (acquire.empty() ? std::string("nothing") : acquire[0]));
  }
  std::vector<std::string> module_batch{"RL.BATCH"};
  std::vector<std::string> module_many{"RL.MANY", "gcra_acquire", acquire[3], acquire[5]};
  // FCALL rl_<version>_gcra_acquire 1 key [now cost] limits: the library's
  // batch takes N keys, then the calls as groups: usual calls (Redis TIME,
  // cost 1) of one limiter as one group gcra_acquire limits N, any other
  // call as gcra_acquire_full now cost limits (docs/key-schema.md).
  const std::vector<std::string> fcall = capture("functions");
  const std::string suffix = "_gcra_acquire";
  if (fcall.size() < 5 || fcall[0] != "FCALL" || fcall[1].size() <= suffix.size() ||
      fcall[1].compare(fcall[1].size() - suffix.size(), suffix.size(), suffix) != 0) {
    fail("the functions store did not send FCALL rl_<version>_gcra_acquire: " +
         (fcall.empty() ? std::string("nothing") : fcall[0]));
  }
  std::vector<std::string> lua_batch{"FCALL",
                                     fcall[1].substr(0, fcall[1].size() - suffix.size()) + "_batch",
                                     std::to_string(kBatch)};
  std::vector<std::string> lua_args;
  const bool short_form = fcall.size() == 5;  // limits alone: Redis TIME, cost 1
  if (short_form) lua_args = {"gcra_acquire", fcall[4], std::to_string(kBatch)};
  for (int i = 0; i < kBatch; ++i) {
    module_batch.insert(module_batch.end(),
                        {acquire[1], "gcra_acquire", acquire[3], acquire[4], acquire[5]});
    module_many.insert(module_many.end(), {acquire[1], acquire[4]});
    lua_batch.push_back(fcall[3]);
    if (!short_form) {
      lua_args.insert(lua_args.end(), {"gcra_acquire_full", fcall[4], fcall[5], fcall[6]});
    }
  }
  lua_batch.insert(lua_batch.end(), lua_args.begin(), lua_args.end());
  const int commands = std::max(1, n / 4);  // CALLS x 16 decisions
  for (const auto& [mode, command] : {std::pair{"module", module_many},
                                      {"module_rl_batch", module_batch},
                                      {"functions", lua_batch}}) {
    const BenchmarkResult r = redis_benchmark(command, key, "-c 4 -P 8", commands, port);
    const double us = r.redis_us_per_call / kBatch;
    std::printf(
        "{\"bench\":\"module_batch\",\"via\":\"redis-benchmark\",\"script_mode\":\"%s\","
        "\"batch\":%d,\"per_second\":%.0f,\"redis_us_per_decision\":%.3f,\"per_core\":%.0f}\n",
        mode, kBatch, r.per_second * kBatch, us, us > 0 ? 1e6 / us : 0);
  }
  // rl's own store, 1,000 calls in flight (10 x CALLS): they leave as
  // batches of up to 64.
  for (const char* mode : {"module", "functions"}) {
    emit_store("module_batch_store", "gcra", mode, 1000,
               decide_on(module_url(std::string("mb") + mode, std::string("script_mode=") + mode),
                         port, "gcra", 1000, 10 * n));
  }
}

void idle_memory() {
  for (const char* algorithm :
       {"gcra", "token_bucket", "sliding_log", "sliding_window", "fixed_window"}) {
    const std::string prefix = unique_prefix(std::string("idle") + algorithm);
    Store store(prefix);
    Limiter limiter(store.store, limiter_settings(algorithm, "100/1m", "memory"));
    limiter.acquire("idle-key");
    std::printf("{\"bench\":\"idle_memory\",\"algorithm\":\"%s\",\"memory_bytes\":%.0f}\n",
                algorithm, memory_usage(prefix + ":"));
  }
}

// The denied-key cache (deny_cache_keys) under attack: 64 callers offer
// one hot key 20x its limit (gcra 500/s; each caller paced at 10,000/64 per
// second, so denials answered locally do not speed the offer up), while
// one more caller acquires distinct keys that are always allowed. Per
// phase (cache off, then on, twice each): store calls per decision on the
// hot key (decisions whose source is the store), admitted, Redis CPU, and
// the allowed caller's p50/p99.
void deny_cache(int seconds) {
  constexpr int kCallers = 64;
  constexpr double kOfferedPerSecond = 10000;  // 20x 500/s
  for (int round = 0; round < 2; ++round) {
    for (bool cache : {false, true}) {
      Store store(unique_prefix("deny" + std::to_string(round) + (cache ? "on" : "off")));
      std::vector<std::pair<std::string, std::string>> settings = {{"algorithm", "gcra"},
                                                                   {"limit", "500/s"}};
      if (cache) settings.emplace_back("deny_cache_keys", "10000");
      Limiter limiter(store.store, settings);
      std::atomic<int64_t> decisions{0}, admitted{0}, store_calls{0};
      std::atomic<bool> running{true};
      const auto start = SteadyClock::now();
      const auto end = start + std::chrono::seconds(seconds);
      redis_cli({"CONFIG", "RESETSTAT"});
      std::vector<std::thread> threads;
      for (int c = 0; c < kCallers; ++c) {
        threads.emplace_back([&, c] {
          const auto interval = std::chrono::duration<double>(kCallers / kOfferedPerSecond);
          auto next =
              start + std::chrono::duration_cast<SteadyClock::duration>(interval * c / kCallers);
          while (next < end) {
            std::this_thread::sleep_until(next);
            const rl_decision d = limiter.acquire("hot");
            ++decisions;
            admitted += d.allowed;
            store_calls += d.source == RL_SOURCE_STORE;
            next += std::chrono::duration_cast<SteadyClock::duration>(interval);
          }
        });
      }
      std::vector<double> allowed_us;
      std::mt19937_64 random(7);
      while (SteadyClock::now() < end) {
        const std::string key = "cold" + random_key(random);
        const auto t0 = SteadyClock::now();
        limiter.acquire(key);
        allowed_us.push_back(
            std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      for (auto& t : threads) t.join();
      const double redis_us = server_usec();
      std::sort(allowed_us.begin(), allowed_us.end());
      std::printf(
          "{\"bench\":\"deny_cache\",\"round\":%d,\"cache\":\"%s\",\"decisions\":%lld,"
          "\"admitted\":%lld,\"store_calls_per_decision\":%.4f,\"redis_us_per_decision\":%.3f,"
          "\"allowed_p50_us\":%.1f,\"allowed_p99_us\":%.1f}\n",
          round, cache ? "on" : "off", static_cast<long long>(decisions.load()),
          static_cast<long long>(admitted.load()),
          static_cast<double>(store_calls) / static_cast<double>(decisions),
          redis_us / static_cast<double>(decisions + static_cast<int64_t>(allowed_us.size())),
          percentile(allowed_us, 50), percentile(allowed_us, 99));
    }
  }
}

// `callers` threads of synchronous gcra acquires over 4,096 keys, `n` in all,
// on the store at `url`: each decision's time in us (sorted) and the rate.
// `pause_s`: after one warm-up call, that long before the callers start.
std::pair<std::vector<double>, double> timed_decisions(const std::string& url, int callers, int n,
                                                       int pause_s = 0) {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  if (rl_store_open(url.c_str(), nullptr, &store, &err) != RL_OK) {
    fail(std::string("rl_store_open: ") + rl_error_message(err));
  }
  std::vector<double> us;
  double per_second = 0;
  {
    Limiter limiter(store, limiter_settings("gcra", kLimit, "bench"));
    if (pause_s > 0) {
      limiter.acquire("warm-up");  // connected, the I/O thread started
      std::fprintf(stderr, "rl_redis_bench: pid %d, callers start in %d s\n", getpid(), pause_s);
      std::this_thread::sleep_for(std::chrono::seconds(pause_s));
    }
    std::vector<std::vector<double>> times(callers);
    const auto start = SteadyClock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c) {
      threads.emplace_back([&, c] {
        std::mt19937_64 random(100 + c);
        for (int i = c; i < n; i += callers) {
          const std::string key = random_key(random);
          const auto t0 = SteadyClock::now();
          limiter.acquire(key);
          times[c].push_back(
              std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
        }
      });
    }
    for (auto& t : threads) t.join();
    per_second = n / std::chrono::duration<double>(SteadyClock::now() - start).count();
    for (const auto& t : times) us.insert(us.end(), t.begin(), t.end());
  }
  rl_store_free(store);
  std::sort(us.begin(), us.end());
  return {us, per_second};
}

// min_replicas=0 and =1 on the Sentinel fixture's master (addressed
// directly) with its one replica on loopback, in alternating rounds so that
// a busy machine weighs on both alike; the medians of the rounds' figures.
void min_replicas(int n) {
  const std::string data_pw = env("RL_TEST_SENTINEL_DATA_PASSWORD");
  std::string master;
  for (const std::string& port : words(env("RL_TEST_SENTINEL_NODE_PORTS"))) {
    if (cli_with(port, data_pw, {"ROLE"}).rfind("master", 0) == 0) master = port;
  }
  if (master.empty()) fail("no master among RL_TEST_SENTINEL_NODE_PORTS");
  const std::string url = "redis://:" + data_pw + "@127.0.0.1:" + master + "?";
  constexpr int kRounds = 5;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("| callers | min_replicas | p50 (us) | p99 (us) | decisions/s |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: |\n");
  for (int callers : {1, 16}) {
    std::vector<double> p50[2], p99[2], rate[2];
    for (int round = 0; round < kRounds; ++round) {
      for (int on = 0; on < 2; ++on) {
        const std::string tag = "mr" + std::to_string(callers) + "x" + std::to_string(on);
        auto [us, per_second] = timed_decisions(
            url + "min_replicas=" + std::to_string(on) + "&prefix=" + unique_prefix(tag), callers,
            n);
        p50[on].push_back(percentile(us, 50));
        p99[on].push_back(percentile(us, 99));
        rate[on].push_back(per_second);
      }
    }
    for (int on = 0; on < 2; ++on) {
      std::printf("| %d | %d | %.0f | %.0f | %.0f |\n", callers, on, median(p50[on]),
                  median(p99[on]), median(rate[on]));
    }
  }
}

// `threads` sync callers at once, as the Java bench's 64 threads are. With
// PAUSE_S, they start that long after the store's I/O thread did, so that
// `perf stat --per-thread -p PID` attached meanwhile shows the I/O thread's
// own counts (futex calls, context switches) and the callers' (threads
// started later count into the main thread's line).
void sync_callers(int threads, int n, int pause_s) {
  std::string url = env("RL_TEST_REDIS_URL") + "?prefix=" + unique_prefix("sync");
  if (const char* options = std::getenv("RL_BENCH_STORE_OPTIONS"); options && *options) {
    url += std::string("&") + options;
  }
  auto [us, per_second] = timed_decisions(url, threads, n, pause_s);
  std::printf(
      "{\"bench\":\"sync_callers\",\"threads\":%d,\"decisions\":%d,\"per_second\":%.0f,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
      threads, n, per_second, percentile(us, 50), percentile(us, 99));
}

int arg_int(int argc, char** argv, int i, int fallback) {
  return i < argc ? std::atoi(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "latency" && argc > 2) {
    latency(argv[2], arg_int(argc, argv, 3, 20000));
  } else if (mode == "throughput" && argc > 2) {
    throughput(argv[2], arg_int(argc, argv, 3, 100000));
  } else if (mode == "sliding-log" && argc > 3) {
    std::vector<int> entries;
    for (int i = 3; i < argc; ++i) entries.push_back(std::atoi(argv[i]));
    sliding_log(std::atoi(argv[2]), entries);
  } else if (mode == "deny-cache") {
    deny_cache(arg_int(argc, argv, 2, 3));
  } else if (mode == "cluster") {
    cluster(arg_int(argc, argv, 2, 20000));
  } else if (mode == "min-replicas") {
    min_replicas(arg_int(argc, argv, 2, 5000));
  } else if (mode == "module-cost") {
    module_cost(arg_int(argc, argv, 2, 50000));
  } else if (mode == "module") {
    module_figures(arg_int(argc, argv, 2, 20000));
  } else if (mode == "sync-callers") {
    sync_callers(arg_int(argc, argv, 2, 64), arg_int(argc, argv, 3, 200000),
                 arg_int(argc, argv, 4, 0));
  } else if (mode == "idle-memory") {
    idle_memory();
  } else if (mode.empty()) {
    for (const char* algorithm : {"gcra", "sliding_log"}) {
      latency(algorithm, 20000);
      throughput(algorithm, 100000);
    }
    idle_memory();
  } else {
    fail(
        "usage: rl_redis_bench [latency ALGORITHM [N] | throughput ALGORITHM [N] | "
        "sliding-log CALLS ENTRIES... | idle-memory | deny-cache [SECONDS] | "
        "cluster [CALLS] | "
        "min-replicas [CALLS] | module-cost [CALLS] | module [CALLS] | "
        "sync-callers [THREADS [CALLS [PAUSE_S]]]]");
  }
  return 0;
}
