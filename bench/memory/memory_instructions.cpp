// Instructions per rl_limiter_acquire on memory:// (run under callgrind by
// bench/memory/instructions.sh): one thread, limit 100/1m, 65,536 distinct
// keys made live first, then CALLS acquires cycling through them, as
// rl_bench_memory's distinct_keys case but with no timing in it.
//   rl_memory_instructions ALGORITHM CALLS
#include <rl/rl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr size_t kKeys = 1 << 16;

void check(rl_status status, rl_error* err, const char* what) {
  if (status == RL_OK) return;
  std::fprintf(stderr, "%s: %s\n", what, rl_error_message(err));
  std::exit(1);
}

// `count` acquires from key 0 on; what callgrind counts (--toggle-collect).
[[gnu::noinline]] long measured_calls(rl_limiter* limiter, const std::vector<std::string>& keys,
                                      long count) {
  rl_request request = RL_REQUEST_INIT;
  request.cost = 1;
  rl_decision decision{};
  decision.version = RL_DECISION_VERSION;
  long admitted = 0;
  for (long i = 0; i < count; ++i) {
    const std::string& key = keys[static_cast<size_t>(i) % keys.size()];
    request.key = key.data();
    request.key_len = key.size();
    rl_limiter_acquire(limiter, &request, &decision, nullptr);
    admitted += decision.allowed;
  }
  return admitted;
}

// The same, not counted: every key becomes live.
[[gnu::noinline]] long warm_up(rl_limiter* limiter, const std::vector<std::string>& keys) {
  rl_request request = RL_REQUEST_INIT;
  request.cost = 1;
  rl_decision decision{};
  decision.version = RL_DECISION_VERSION;
  long admitted = 0;
  for (const std::string& key : keys) {
    request.key = key.data();
    request.key_len = key.size();
    rl_limiter_acquire(limiter, &request, &decision, nullptr);
    admitted += decision.allowed;
  }
  return admitted;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rl_memory_instructions ALGORITHM CALLS\n");
    return 2;
  }
  rl_error* err = nullptr;
  rl_store* store = nullptr;
  check(rl_store_open("memory://", nullptr, &store, &err), err, "rl_store_open");
  rl_config* cfg = rl_config_new();
  check(rl_config_set(cfg, "algorithm", argv[1], &err), err, "algorithm");
  check(rl_config_set(cfg, "limit", "100/1m", &err), err, "limit");
  rl_limiter* limiter = nullptr;
  check(rl_limiter_new(store, cfg, &limiter, &err), err, "rl_limiter_new");
  rl_config_free(cfg);
  std::vector<std::string> keys;
  for (size_t i = 0; i < kKeys; ++i) keys.push_back("user:" + std::to_string(i));
  const long calls = std::atol(argv[2]);
  const long admitted = warm_up(limiter, keys) + measured_calls(limiter, keys, calls);
  std::printf("%s: %ld calls, %ld admitted\n", argv[1], calls + static_cast<long>(kKeys), admitted);
  rl_limiter_free(limiter);
  rl_store_free(store);
}
