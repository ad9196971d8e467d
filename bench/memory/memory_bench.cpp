// ns per rl_limiter_acquire on memory:// (monotonic clock), per algorithm:
// one thread on distinct keys, one thread on one hot key, two threads on
// distinct keys (each its own half of the keys) and two on one hot key.
// Every limiter is "100/1m": a key seen once stays live for the whole run, so
// distinct keys measure lookups of existing keys. "admitted" is the share
// of requests admitted, to tell the admitted path from the denied one.
#include <benchmark/benchmark.h>
#include <rl/rl.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr size_t kKeys = 1 << 16;
const char* const kAlgorithms[] = {"gcra", "token_bucket", "sliding_log", "sliding_window",
                                   "fixed_window"};

// One store and limiter per benchmark, shared by its threads.
struct Target {
  rl_store* store = nullptr;
  rl_limiter* limiter = nullptr;
  std::vector<std::string> keys;
};
Target target;

void check(rl_status status, rl_error* err, const char* what) {
  if (status == RL_OK) return;
  std::fprintf(stderr, "%s: %s\n", what, rl_error_message(err));
  std::exit(1);
}

void open_target(const char* algorithm) {
  rl_error* err = nullptr;
  check(rl_store_open("memory://", nullptr, &target.store, &err), err, "rl_store_open");
  rl_config* cfg = rl_config_new();
  check(rl_config_set(cfg, "algorithm", algorithm, &err), err, "algorithm");
  check(rl_config_set(cfg, "limit", "100/1m", &err), err, "limit");
  check(rl_limiter_new(target.store, cfg, &target.limiter, &err), err, "rl_limiter_new");
  rl_config_free(cfg);
  if (target.keys.empty()) {
    for (size_t i = 0; i < kKeys; ++i) target.keys.push_back("user:" + std::to_string(i));
  }
}

// Setup hooks are plain function pointers: one per algorithm.
template <size_t I>
void open_algorithm(const benchmark::State&) {
  open_target(kAlgorithms[I]);
}
void (*const kOpen[])(const benchmark::State&) = {
    open_algorithm<0>, open_algorithm<1>, open_algorithm<2>, open_algorithm<3>, open_algorithm<4>};

void close_target(const benchmark::State&) {
  rl_limiter_free(target.limiter);
  rl_store_free(target.store);
  target.limiter = nullptr;
  target.store = nullptr;
}

void acquire(benchmark::State& state, bool hot_key) {
  // Thread t cycles through its own slice of the keys (or all share key 0).
  const size_t slice = kKeys / state.threads();
  const size_t first = slice * state.thread_index();
  rl_request request = RL_REQUEST_INIT;
  request.cost = 1;
  rl_decision decision{};
  decision.version = RL_DECISION_VERSION;
  int64_t admitted = 0;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& key = target.keys[hot_key ? 0 : first + i++ % slice];
    request.key = key.data();
    request.key_len = key.size();
    rl_limiter_acquire(target.limiter, &request, &decision, nullptr);
    admitted += decision.allowed;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["admitted"] =
      benchmark::Counter(static_cast<double>(admitted) / static_cast<double>(state.iterations()),
                         benchmark::Counter::kAvgThreads);
}

}  // namespace

int main(int argc, char** argv) {
  for (size_t a = 0; a < std::size(kAlgorithms); ++a) {
    for (bool hot : {false, true}) {
      const std::string name =
          std::string("acquire/") + kAlgorithms[a] + (hot ? "/hot_key" : "/distinct_keys");
      benchmark::RegisterBenchmark(name.c_str(), acquire, hot)
          ->Setup(kOpen[a])
          ->Teardown(close_target)
          ->Threads(1)
          ->Threads(2)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
