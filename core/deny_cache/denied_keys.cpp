#include "denied_keys.h"

#include <functional>
#include <limits>

namespace rl {

DeniedKeys::DeniedKeys(size_t capacity)
    : per_shard_(capacity / kShards > 0 ? capacity / kShards : 1) {}

DeniedKeys::Shard& DeniedKeys::shard_for(std::string_view key) {
  return shards_[std::hash<std::string_view>{}(key) % kShards];
}

std::optional<Verdict> DeniedKeys::lookup(std::string_view key, int64_t cost, int64_t now_us) {
  if (size() == 0) return std::nullopt;  // nothing denied: no lock, no hash lookup
  Shard& shard = shard_for(key);
  std::lock_guard lock(shard.mutex);
  auto it = shard.entries.find(std::string(key));
  if (it == shard.entries.end()) return std::nullopt;
  const Entry& e = it->second;
  if (now_us >= e.until_us) {  // Redis may admit it now: ask it
    shard.entries.erase(it);
    size_.fetch_sub(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  if (cost < e.cost) return std::nullopt;
  Verdict v = e.verdict;
  v.source = Source::deny_cache;
  v.retry_after_us = e.until_us == std::numeric_limits<int64_t>::max() ? -1 : e.until_us - now_us;
  v.reset_after_us = e.reset_at_us > now_us ? e.reset_at_us - now_us : 0;
  return v;
}

void DeniedKeys::remember(std::string_view key, int64_t cost, int64_t asked_at_us,
                          const Verdict& denial) {
  if (denial.allowed || denial.retry_after_us == 0) return;
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  Entry e{cost, denial.retry_after_us < 0 ? kNever : asked_at_us + denial.retry_after_us,
          asked_at_us + denial.reset_after_us, denial};
  Shard& shard = shard_for(key);
  std::lock_guard lock(shard.mutex);
  auto it = shard.entries.find(std::string(key));
  if (it != shard.entries.end()) {
    it->second = e;
    return;
  }
  if (shard.entries.size() >= per_shard_) {
    // Full: the first entry goes (any will do; they all end by themselves).
    shard.entries.erase(shard.entries.begin());
    size_.fetch_sub(1, std::memory_order_relaxed);
  }
  shard.entries.emplace(std::string(key), e);
  size_.fetch_add(1, std::memory_order_relaxed);
}

void DeniedKeys::forget(std::string_view key) {
  if (size() == 0) return;
  Shard& shard = shard_for(key);
  std::lock_guard lock(shard.mutex);
  if (shard.entries.erase(std::string(key)) > 0) size_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace rl
