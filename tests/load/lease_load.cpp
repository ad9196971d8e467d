// Leases under load, in real OS processes against one real redis-server
// (run it under scripts/with-redis; with RL_TEST_REDIS_MODULE set, the
// module's server too):
//   rl_lease_load exactness [--seconds S] [--processes P] [--threads T]
//                           [--only ALGORITHM,...] [--backends lua,module]
//                           [--under enforce|report]
//     P processes (8) of T threads (8) on one key per case, paced demand at
//     2x and 20x the limit for S seconds (30) on the real clock, for every
//     algorithm in admission_check.cpp's list, through the Lua library and
//     the module. Every call's interval is collected and the algorithm's
//     promise checked from those times; prints a table and
//     "N passed, N failed". A case fails on any over-admission or failed
//     call, when no admission came from a slice, and (unless --under
//     report) on under-admission past its bound.
//   rl_lease_load cost [--seconds S] [--processes P] [--threads T] [--json]
//                      [--only ALGORITHM]
//     one hot key far below its limit (fixed_window, or the one algorithm
//     --only names), P processes (8) of T callers (1),
//     leases off and on, Lua and module: decisions/s, store calls per
//     decision, Redis CPU per decision, p99 of a call and of a call decided
//     from a slice (bench/README.md says how each is measured).
#include <rl/rl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "admission_check.h"
#include "redis_probe.h"
#include "workers.h"

namespace rl_load {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

struct Options {
  std::string mode;
  double seconds = 0;
  int processes = 8;
  int threads = 0;
  bool json = false;
  bool enforce_under = true;  // --under report: under-admission shown, not failed
  std::vector<std::string> only;
  std::vector<std::string> backends = {"lua", "module"};
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(why.empty() ? stdout : stderr,
               "%s%susage: rl_lease_load exactness|cost [--seconds S] "
               "[--processes P] [--threads T] [--only ALGORITHM,...] [--backends lua,module] "
               "[--under enforce|report] [--json]\n",
               why.empty() ? "" : "rl_lease_load: ", why.empty() ? "" : (why + "\n").c_str());
  std::exit(why.empty() ? 0 : 2);
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage("needs a mode");
  o.mode = argv[1];
  if (o.mode == "-h" || o.mode == "--help") usage("");
  if (o.mode != "exactness" && o.mode != "cost") usage("unknown mode '" + o.mode + "'");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") usage("");
    if (a == "--seconds") {
      o.seconds = std::atof(value().c_str());
      if (!(o.seconds > 0 && o.seconds <= 3600)) usage("--seconds needs 0 < S <= 3600");
    } else if (a == "--processes") {
      o.processes = std::atoi(value().c_str());
      if (o.processes < 1 || o.processes > 64) usage("--processes needs 1 to 64");
    } else if (a == "--threads") {
      o.threads = std::atoi(value().c_str());
      if (o.threads < 1 || o.threads > 256) usage("--threads needs 1 to 256");
    } else if (a == "--only") {
      o.only = split(value());
      for (const auto& name : o.only) {
        const auto& all = promises();
        if (std::none_of(all.begin(), all.end(),
                         [&](const Promise& p) { return p.algorithm == name; })) {
          usage("--only takes algorithms of admission_check.cpp's list, not '" +
                name.substr(0, 40) + "'");
        }
      }
    } else if (a == "--backends") {
      o.backends = split(value());
      for (const auto& b : o.backends) {
        if (b != "lua" && b != "module") usage("--backends takes lua and module, not '" + b + "'");
      }
    } else if (a == "--under") {
      const std::string v = value();
      if (v != "enforce" && v != "report")
        usage("--under takes enforce or report, not '" + v + "'");
      o.enforce_under = v == "enforce";
    } else if (a == "--json") {
      o.json = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (o.seconds == 0) o.seconds = o.mode == "exactness" ? 30 : 3;
  if (o.threads == 0) o.threads = o.mode == "exactness" ? 8 : 1;
  return o;
}

// The store URL of a backend: the Lua library on the main server, the
// module on the module's server (script_mode=module); empty when that
// server was not started.
std::string backend_url(const std::string& backend) {
  const char* url =
      std::getenv(backend == "lua" ? "RL_TEST_REDIS_URL" : "RL_TEST_REDIS_MODULE_URL");
  if (url == nullptr || *url == 0) return "";
  return std::string(url) + (backend == "lua" ? "?script_mode=functions" : "?script_mode=module");
}

std::string unique_prefix(const std::string& what) {
  return "rlload" + std::to_string(getpid()) + std::to_string(realtime_us() % 1000000) + what;
}

// rl's C ABI in a worker: a store and one limiter, every failure an error.
struct Rl {
  rl_store* store = nullptr;
  rl_limiter* limiter = nullptr;
  std::string error;
  bool refused = false;  // the limiter refused lease=auto for its algorithm

  Rl(const std::string& url, const Settings& settings) {
    rl_error* err = nullptr;
    if (rl_store_open(url.c_str(), nullptr, &store, &err) != RL_OK) {
      error = std::string("rl_store_open: ") + (err ? rl_error_message(err) : "");
      return;
    }
    rl_config* cfg = rl_config_new();
    for (const auto& [k, v] : settings) {
      if (rl_config_set(cfg, k.c_str(), v.c_str(), &err) != RL_OK) break;
    }
    const rl_status s = err ? RL_E_INVALID_ARG : rl_limiter_new(store, cfg, &limiter, &err);
    rl_config_free(cfg);
    if (s != RL_OK) {
      error = std::string(rl_status_name(s)) + ": " + (err ? rl_error_message(err) : "");
      refused = s == RL_E_INVALID_ARG && error.find("lease: algorithm") != std::string::npos;
    }
    rl_error_free(err);
  }
  ~Rl() {
    rl_limiter_free(limiter);
    rl_store_free(store);
  }
  bool acquire(const std::string& key, rl_decision& d) {
    rl_request request = RL_REQUEST_INIT;
    request.key = key.data();
    request.key_len = key.size();
    request.cost = 1;
    d = rl_decision{};
    d.version = RL_DECISION_VERSION;
    rl_error* err = nullptr;
    const bool ok = rl_limiter_acquire(limiter, &request, &d, &err) == RL_OK;
    rl_error_free(err);
    return ok;
  }
  uint64_t round_trips() {
    rl_store_stats s = RL_STORE_STATS_INIT;
    rl_store_get_stats(store, &s, nullptr);
    return s.round_trips;
  }
};

std::string result_path(const std::string& dir, int index) {
  return dir + "/worker-" + std::to_string(index) + ".bin";
}

template <typename T>
void write_file(const std::string& path, const std::vector<T>& items, const std::string& error,
                uint64_t round_trips = 0) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = items.size(), e = error.size();
  out.write(reinterpret_cast<const char*>(&round_trips), sizeof round_trips);
  out.write(reinterpret_cast<const char*>(&e), sizeof e);
  out.write(error.data(), static_cast<std::streamsize>(e));
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
  out.write(reinterpret_cast<const char*>(items.data()),
            static_cast<std::streamsize>(n * sizeof(T)));
}

template <typename T>
std::vector<T> read_file(const std::string& path, std::string& error,
                         uint64_t* round_trips = nullptr) {
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0, e = 0, trips = 0;
  in.read(reinterpret_cast<char*>(&trips), sizeof trips);
  if (round_trips) *round_trips += trips;
  in.read(reinterpret_cast<char*>(&e), sizeof e);
  error.assign(e, 0);
  in.read(error.data(), static_cast<std::streamsize>(e));
  in.read(reinterpret_cast<char*>(&n), sizeof n);
  std::vector<T> items(in ? n : 0);
  in.read(reinterpret_cast<char*>(items.data()),
          static_cast<std::streamsize>(items.size() * sizeof(T)));
  if (!in) error = error.empty() ? "cannot read " + path : error;
  return items;
}

std::string temp_dir() {
  char path[] = "/tmp/rl-lease-load.XXXXXX";
  if (mkdtemp(path) == nullptr) throw std::runtime_error("mkdtemp failed");
  return path;
}

void remove_dir(const std::string& dir, int files) {
  for (int i = 0; i < files; ++i) unlink(result_path(dir, i).c_str());
  rmdir(dir.c_str());
}

// ---- exactness ------------------------------------------------------------

// Where the lease settings leave the stated under-admission bound:
// processes * floor(limit * lease_share) (docs/algorithms.md, Leases).
constexpr int64_t kShareDenominator = 50;

struct Case {
  std::string algorithm;
  Limit limit;
  std::string limit_text;   // the limit setting
  std::string granularity;  // sliding_window's, or empty
  std::string burst;        // token_bucket's, or empty (gcra's is the limit)
};

// The limits each algorithm is loaded with: small enough that a 2-core
// machine offers 20x of them, large enough that 8 processes lease (each
// asks at least lease_threshold units/s at 2x).
Case case_for(const std::string& algorithm) {
  if (algorithm == "sliding_window") {
    return {algorithm, {500, 500000, 100000, 0}, "500/500ms", "100ms", ""};
  }
  if (algorithm == "fixed_window") return {algorithm, {500, 500000, 0, 0}, "500/500ms", "", ""};
  if (algorithm == "sliding_log") {
    // lease_ms (its default, 50 ms): how long past its use a unit's record
    // may stand.
    return {algorithm, {1000, 1000000, 0, 0, 50000}, "1000/s", "", ""};
  }
  if (algorithm == "token_bucket") {
    return {algorithm, {1000, 1000000, 0, 1000}, "1000/s", "", "1000"};
  }
  return {algorithm, {1000, 1000000, 0, 0}, "1000/s", "", ""};
}

Settings case_settings(const Case& c, bool lease) {
  Settings s = {{"algorithm", c.algorithm}, {"limit", c.limit_text}};
  if (!c.granularity.empty()) s.emplace_back("granularity", c.granularity);
  if (!c.burst.empty()) s.emplace_back("burst", c.burst);
  if (lease) {
    s.insert(s.end(), {{"lease", "auto"},
                       {"lease_threshold", "100"},
                       {"lease_share", "1/" + std::to_string(kShareDenominator)}});
  }
  return s;
}

int exactness_worker(const std::string& url, const Case& c, int demand, const Options& o,
                     const std::string& dir, int index, const WaitForStart& wait_for_start) {
  std::vector<Call> calls;
  std::string error;
  Rl rl(url, case_settings(c, true));
  const int64_t start = wait_for_start();
  if (!rl.error.empty()) {
    write_file(result_path(dir, index), calls, (rl.refused ? "refused: " : "") + rl.error);
    return 0;
  }
  const int64_t end = start + static_cast<int64_t>(o.seconds * 1e6);
  const uint64_t trips_before = rl.round_trips();
  const int callers = o.processes * o.threads;
  // Each caller offers demand * limit / window / callers calls per second,
  // its first at its own phase; a caller late by more than 20 ms drops the
  // calls it missed rather than bursting them.
  const double interval_us = static_cast<double>(c.limit.window_us) * callers /
                             (static_cast<double>(demand) * c.limit.limit);
  std::vector<std::vector<Call>> mine(o.threads);
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "hot";
      double next = start + interval_us * (index * o.threads + t) / callers;
      rl_decision d;
      while (next < end) {
        int64_t now = realtime_us();
        if (now < next) {
          std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(next) - now));
        } else if (now - next > 20000) {
          next = now;
        }
        Call call;
        const uint64_t trips = rl.round_trips();
        call.t0_us = realtime_us();
        const bool ok = rl.acquire(key, d);
        call.t1_us = realtime_us();
        call.no_round_trip = rl.round_trips() == trips;
        call.allowed = ok && d.allowed;
        if (ok) {
          mine[t].push_back(call);
        } else {
          ++errors;
        }
        next += interval_us;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& m : mine) calls.insert(calls.end(), m.begin(), m.end());
  if (errors > 0) error = std::to_string(errors.load()) + " calls failed";
  write_file(result_path(dir, index), calls, error, rl.round_trips() - trips_before);
  return 0;
}

enum class Outcome { passed, failed, skipped };

// One case: its table row and how it ended.
Outcome exactness_case(const std::string& backend, const Promise& promise, int demand,
                       const Options& o) {
  const std::string base = backend_url(backend);
  const Case c = case_for(promise.algorithm);
  const std::string url =
      base + "&prefix=" + unique_prefix(promise.algorithm + std::to_string(demand));
  const std::string dir = temp_dir();
  RedisProbe probe(base);
  const RedisProbe::Skew skew = probe.skew();
  const bool ran = run_workers(
      o.processes,
      [&](int index, const WaitForStart& wait) {
        return exactness_worker(url, c, demand, o, dir, index, wait);
      },
      [] {});
  std::vector<Call> calls;
  std::string error;
  uint64_t trips = 0;
  for (int i = 0; i < o.processes && ran; ++i) {
    std::string e;
    for (Call call : read_file<Call>(result_path(dir, i), e, &trips)) {
      call.t0_us += skew.offset_us;  // onto Redis's clock
      call.t1_us += skew.offset_us;
      calls.push_back(call);
    }
    if (!e.empty() && error.empty()) error = e;
  }
  remove_dir(dir, o.processes);
  if (!ran) error = "a worker process failed";
  const std::string name = backend + " " + promise.algorithm;
  if (error.rfind("refused: ", 0) == 0) {
    std::printf("| %-21s | %3dx | skipped: the limiter refuses lease=auto (%s) |\n", name.c_str(),
                demand, error.substr(9, 120).c_str());
    return Outcome::skipped;
  }
  const Finding f = promise.check(calls, c.limit, skew.uncertainty_us);
  // The buckets' shortfall also counts the refill the holds cost: the
  // bucket refills only up to its capacity minus the held units (at most
  // one slice per process), so it stops at most that far below where it
  // would have: the bound twice over.
  const int64_t bound = o.processes * (c.limit.limit / kShareDenominator) * (promise.holds ? 2 : 1);
  const int64_t made = f.admitted + f.denied;
  const double trips_per_call = made ? static_cast<double>(trips) / made : 0;
  int64_t from_slice = 0;
  for (const Call& call : calls) from_slice += call.allowed && call.no_round_trip;
  const double slice_share = f.admitted ? 100.0 * from_slice / f.admitted : 0;
  // A case none of whose admissions came from a slice proves nothing of leases.
  if (error.empty() && from_slice == 0) error = "no admission was decided from a slice";
  const bool under_ok = f.under_max <= bound;
  const bool ok =
      error.empty() && f.over_max <= 0 && f.admitted > 0 && (under_ok || !o.enforce_under);
  std::printf(
      "| %-21s | %3dx | %8lld | %5.1f%% | %8lld | %6.3f | %8lld | %4lld | %4lld | %4lld | %5lld | "
      "%s%s\n",
      name.c_str(), demand, static_cast<long long>(f.admitted), slice_share,
      static_cast<long long>(f.denied), trips_per_call, static_cast<long long>(f.allowed_by_limit),
      static_cast<long long>(std::max<int64_t>(0, f.over_max)), static_cast<long long>(f.under_max),
      static_cast<long long>(bound), static_cast<long long>(skew.offset_us),
      !ok        ? "FAILED"
      : under_ok ? "ok"
                 : "ok (under above its bound: reported, not failed)",
      error.empty() ? "" : (" (" + error.substr(0, 200) + ")").c_str());
  return ok ? Outcome::passed : Outcome::failed;
}

// The checkers on made-up times that break each promise by one unit, and
// on times that keep it: a checker that finds nothing proves nothing.
bool checkers_find_excess() {
  auto at = [](std::initializer_list<int64_t> times) {
    std::vector<Call> calls;
    for (int64_t t : times) calls.push_back({t, t + 1, true});
    return calls;
  };
  auto over = [](const std::string& algorithm, const std::vector<Call>& calls, const Limit& l) {
    for (const Promise& p : promises()) {
      if (p.algorithm == algorithm) return p.check(calls, l, 0).over_max;
    }
    return int64_t{-1};
  };
  const Limit fixed{2, 1000, 0, 0}, sliding{2, 1000, 500, 0}, bucket{1, 1000, 0, 0};
  std::vector<Call> straddles = at({10, 20});
  straddles.push_back({995, 1005, true});  // may be in either window: proves nothing
  return over("fixed_window", at({10, 20, 30}), fixed) == 1 &&
         over("fixed_window", straddles, fixed) == 0 &&
         over("fixed_window", at({10, 20, 1010, 1020}), fixed) == 0 &&
         // Two in sub-window 0 weigh ceil(2 * 399 / 500) = 2 at offset 101 of sub-window 1
         // (and still 2 in sub-window 2); in sub-window 3 they no longer count.
         over("sliding_window", at({100, 200, 600}), sliding) == 1 &&
         over("sliding_window", at({100, 200, 1500}), sliding) == 0 &&
         // Five sub-windows of 200 us: three at once (in the sum and in 800 us alike).
         over("sliding_window", at({100, 101, 102}), Limit{2, 1000, 200, 0}) == 1 &&
         // A window of 1000 us from 10 holds the calls at 10, 20 and 1008: 3 > 2.
         // Those at 10 and 1010 are 1000 us apart, never in one window; those
         // at 20, 1010 and 1018 are in the one from 20.
         over("sliding_log", at({10, 20, 1008}), fixed) == 1 &&
         over("sliding_log", at({10, 20, 1010}), fixed) == 0 &&
         over("sliding_log", at({10, 20, 1010, 1018}), fixed) == 1 &&
         over("gcra", at({0, 500}), bucket) == 1 && over("gcra", at({0, 1002}), bucket) == 0 &&
         over("token_bucket", at({0, 1, 2}), bucket) == 2 &&
         // Burst 3 at 2 per 1000 us: [0, 1001] holds 5 <= 3 + 2.002, [0, 999]
         // 5 > 3 + 1.998, [0, 4] 4 > 3.008.
         over("token_bucket", at({0, 1, 2, 500, 1000}), Limit{2, 1000, 0, 3}) == 0 &&
         over("token_bucket", at({0, 1, 2, 500, 998}), Limit{2, 1000, 0, 3}) == 1 &&
         over("token_bucket", at({0, 1, 2, 3}), Limit{2, 1000, 0, 3}) == 1 &&
         // Only an interval from a later start shows it: [0, 2002] holds 3 <=
         // 1 + 2.002, but [2000, 2002] 2 > 1.002.
         over("gcra", at({0, 2000, 2001}), bucket) == 1 &&
         over("gcra", at({0, 2000, 3001}), bucket) == 0 &&
         // Two calls over [0, 1000] may have been decided 1000 us apart: nothing.
         over("gcra", {{0, 1000, true}, {0, 1000, true}}, bucket) == 0;
}

int exactness(const Options& o) {
  std::printf(
      "rl_lease_load exactness: %d processes x %d threads on one key per case, %.1f s per case, "
      "real clock; lease=auto lease_threshold=100 lease_share=1/%lld (defaults otherwise)\n",
      o.processes, o.threads, o.seconds, static_cast<long long>(kShareDenominator));
  std::printf(
      "over: the most units any window the algorithm promises held past it, proven from the "
      "calls' times (0: none); under: the most units the limit still had room for at a denial "
      "(capacity in slices), against its bound processes * floor(limit * lease_share); for gcra "
      "and token_bucket: burst + rate * span (the limit bound) minus the admitted, against twice "
      "that bound (units in slices, and the refill their holds cost); "
      "from a slice: the admissions during which their process made no store round trip (at "
      "least that many were decided from a slice); trips/call: the processes' store round trips "
      "per call (leases off: about 1, less when "
      "calls coalesce); skew: Redis TIME minus this host's clock, us\n\n");
  std::printf(
      "| backend algorithm     | demand | admitted | from a slice | denied | trips/call | limit "
      "bound | over | "
      "under | bound | skew | result\n");
  std::printf(
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  int passed = 0, failed = 0, skipped = 0;
  if (checkers_find_excess()) {
    ++passed;
  } else {
    std::printf(
        "| checkers | FAILED: a checker missed a made-up excess or found one in kept times |\n");
    ++failed;
  }
  for (const std::string& backend : o.backends) {
    if (backend_url(backend).empty()) {
      std::printf("| %-21s | skipped: %s is not set (scripts/with-redis%s) |\n", backend.c_str(),
                  backend == "lua" ? "RL_TEST_REDIS_URL" : "RL_TEST_REDIS_MODULE_URL",
                  backend == "lua" ? "" : " with RL_TEST_REDIS_MODULE");
      ++failed;
      continue;
    }
    for (const Promise& p : promises()) {
      if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), p.algorithm) == o.only.end()) {
        continue;
      }
      for (int demand : {2, 20}) {
        Outcome outcome = Outcome::failed;
        try {
          outcome = exactness_case(backend, p, demand, o);
        } catch (const std::exception& e) {
          std::printf("| %s %s | %dx | FAILED: %s |\n", backend.c_str(), p.algorithm.c_str(),
                      demand, e.what());
        }
        (outcome == Outcome::passed ? passed : outcome == Outcome::failed ? failed : skipped)++;
      }
    }
  }
  if (skipped > 0) std::printf("\n%d skipped (the algorithm does not lease here)\n", skipped);
  std::printf("\n%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

// ---- cost -----------------------------------------------------------------

// Call times in 50 ns steps up to 1 ms; the last bucket holds the rest.
constexpr int kBuckets = 20001;
constexpr int64_t kBucketNs = 50;
// One call in this many is also classified (store round trips read before
// and after it): with one caller per process, a call that made none was
// decided from a slice.
constexpr int64_t kClassifyEvery = 16;

struct CostResult {
  int64_t decisions = 0;
  uint64_t round_trips = 0;
  int64_t from_slice = 0;  // classified calls decided from a slice
  int64_t classified = 0;
  uint64_t all[kBuckets] = {};
  uint64_t slice[kBuckets] = {};
};

void record(uint64_t* histogram, int64_t ns) {
  histogram[std::min<int64_t>(kBuckets - 1, std::max<int64_t>(0, ns) / kBucketNs)]++;
}

// The p99 of every call (`slice` false) or of the classified calls decided
// from a slice, in us; -1 when there were none.
double p99_us(const std::vector<CostResult>& results, bool slice) {
  uint64_t total = 0;
  std::vector<uint64_t> merged(kBuckets, 0);
  for (const CostResult& r : results) {
    for (int b = 0; b < kBuckets; ++b) merged[b] += slice ? r.slice[b] : r.all[b];
  }
  for (uint64_t n : merged) total += n;
  if (total == 0) return -1;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += merged[b];
    if (seen * 100 >= total * 99) return (b + 1) * kBucketNs / 1000.0;
  }
  return -1;
}

// cost: the algorithm of --only (one), else fixed_window.
std::string cost_algorithm(const Options& o) {
  return o.only.empty() ? "fixed_window" : o.only.front();
}

int cost_worker(const std::string& url, bool lease, const Options& o, const std::string& dir,
                int index, const WaitForStart& wait_for_start) {
  Settings settings = {{"algorithm", cost_algorithm(o)}, {"limit", "100000000/s"}};
  if (lease) settings.insert(settings.end(), {{"lease", "auto"}, {"lease_share", "1/100"}});
  Rl rl(url, settings);
  std::vector<CostResult> result(1);
  if (!rl.error.empty()) {
    wait_for_start();
    write_file(result_path(dir, index), std::vector<CostResult>{}, rl.error);
    return 0;
  }
  rl_decision d;
  for (int i = 0; i < 2000; ++i) rl.acquire("hot", d);  // connected; a lease running
  const int64_t start = wait_for_start();
  const int64_t end = start + static_cast<int64_t>(o.seconds * 1e6);
  const uint64_t trips_before = rl.round_trips();
  std::vector<CostResult> per_thread(o.threads);
  std::vector<std::thread> threads;
  std::atomic<int64_t> errors{0};
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      CostResult& r = per_thread[t];
      using Clock = std::chrono::steady_clock;
      const bool alone = o.threads == 1;
      for (int64_t i = 0; realtime_us() < end; ++i) {
        const bool classify = alone && i % kClassifyEvery == 0;
        const uint64_t trips = classify ? rl.round_trips() : 0;
        const auto t0 = Clock::now();
        const bool ok = rl.acquire("hot", d);
        const int64_t ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
        if (!ok) ++errors;
        ++r.decisions;
        record(r.all, ns);
        if (classify) {
          ++r.classified;
          if (rl.round_trips() == trips) {
            ++r.from_slice;
            record(r.slice, ns);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CostResult& total = result[0];
  for (const CostResult& r : per_thread) {
    total.decisions += r.decisions;
    total.classified += r.classified;
    total.from_slice += r.from_slice;
    for (int b = 0; b < kBuckets; ++b) {
      total.all[b] += r.all[b];
      total.slice[b] += r.slice[b];
    }
  }
  total.round_trips = rl.round_trips() - trips_before;
  write_file(result_path(dir, index), result,
             errors > 0 ? std::to_string(errors.load()) + " calls failed" : "");
  return 0;
}

struct CostRow {
  std::string backend;
  bool lease = false;
  double decisions_per_s = 0, store_calls = 0, redis_calls = 0, redis_us = 0, p99 = 0,
         slice_p99 = -1, slice_share = 0;
  std::string error;
};

CostRow cost_phase(const std::string& backend, bool lease, const Options& o) {
  CostRow row;
  row.backend = backend;
  row.lease = lease;
  const std::string base = backend_url(backend);
  const std::string url = base + "&prefix=" + unique_prefix(lease ? "coston" : "costoff");
  const std::string dir = temp_dir();
  RedisProbe probe(base);
  const bool ran = run_workers(
      o.processes,
      [&](int index, const WaitForStart& wait) {
        return cost_worker(url, lease, o, dir, index, wait);
      },
      [&] {
        probe.command({"CONFIG", "RESETSTAT"});
      });
  const RedisProbe::Work work = probe.work();
  std::vector<CostResult> results;
  for (int i = 0; i < o.processes && ran; ++i) {
    std::string e;
    std::vector<CostResult> r = read_file<CostResult>(result_path(dir, i), e);
    results.insert(results.end(), r.begin(), r.end());
    if (!e.empty() && row.error.empty()) row.error = e;
  }
  remove_dir(dir, o.processes);
  if (!ran) row.error = "a worker process failed";
  int64_t decisions = 0, classified = 0, from_slice = 0;
  uint64_t trips = 0;
  for (const CostResult& r : results) {
    decisions += r.decisions;
    trips += r.round_trips;
    classified += r.classified;
    from_slice += r.from_slice;
  }
  if (decisions == 0) {
    if (row.error.empty()) row.error = "no decisions";
    return row;
  }
  row.decisions_per_s = decisions / o.seconds;
  row.store_calls = static_cast<double>(trips) / decisions;
  row.redis_calls = work.calls / decisions;
  row.redis_us = work.usec / decisions;
  row.p99 = p99_us(results, false);
  row.slice_p99 = p99_us(results, true);
  row.slice_share = classified ? static_cast<double>(from_slice) / classified : 0;
  return row;
}

std::string number_or_null(double v) {
  if (v < 0) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

int cost(const Options& o) {
  std::vector<CostRow> rows;
  for (const std::string& backend : o.backends) {
    if (backend_url(backend).empty()) {
      std::fprintf(stderr, "rl_lease_load: no server for %s: skipped\n", backend.c_str());
      continue;
    }
    for (bool lease : {false, true}) rows.push_back(cost_phase(backend, lease, o));
  }
  int failed = 0;
  for (const CostRow& r : rows) failed += !r.error.empty();
  if (o.json) {
    for (const CostRow& r : rows) {
      std::printf(
          "{\"bench\":\"lease_load\",\"algorithm\":\"%s\",\"backend\":\"%s\",\"lease\":\"%s\","
          "\"processes\":%d,"
          "\"threads\":%d,\"decisions_per_s\":%.0f,\"store_calls_per_decision\":%.5f,"
          "\"redis_calls_per_decision\":%.5f,\"redis_us_per_decision\":%.4f,\"p99_us\":%.2f,"
          "\"slice_p99_us\":%s,\"slice_share\":%.4f%s%s%s}\n",
          cost_algorithm(o).c_str(), r.backend.c_str(), r.lease ? "auto" : "off", o.processes,
          o.threads, r.decisions_per_s, r.store_calls, r.redis_calls, r.redis_us, r.p99,
          number_or_null(r.slice_p99).c_str(), r.slice_share,
          r.error.empty() ? "" : ",\"error\":\"", r.error.c_str(), r.error.empty() ? "" : "\"");
    }
    return failed == 0 ? 0 : 1;
  }
  std::printf(
      "rl_lease_load cost: one hot key, %s 100000000/s, %d processes x %d callers, %.1f "
      "s per phase\n\n",
      cost_algorithm(o).c_str(), o.processes, o.threads, o.seconds);
  std::printf(
      "| backend | lease | decisions/s | store calls/decision | Redis calls/decision | Redis "
      "us/decision | p99 us | "
      "p99 us from a slice | from a slice |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: "
      "| ---: |\n");
  for (const CostRow& r : rows) {
    std::printf("| %s | %s | %.0f | %.4f | %.4f | %.3f | %.2f | %.2f | %.1f%% |%s\n",
                r.backend.c_str(), r.lease ? "auto" : "off", r.decisions_per_s, r.store_calls,
                r.redis_calls, r.redis_us, r.p99, r.slice_p99, 100 * r.slice_share,
                r.error.empty() ? "" : (" " + r.error).c_str());
  }
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const CostRow &off = rows[i], &on = rows[i + 1];
    std::printf(
        "%s, on/off: decisions/s %.2fx, store calls/decision %.4fx, Redis us/decision %.4fx\n",
        off.backend.c_str(), on.decisions_per_s / off.decisions_per_s,
        on.store_calls / off.store_calls, on.redis_us / off.redis_us);
  }
  std::printf("\n%zu passed, %d failed\n", rows.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rl_load

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const rl_load::Options o = rl_load::parse(argc, argv);
  try {
    return o.mode == "exactness" ? rl_load::exactness(o) : rl_load::cost(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rl_lease_load: %s\n", e.what());
    return 1;
  }
}
