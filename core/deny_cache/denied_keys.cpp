#include "denied_keys.h"

#include <chrono>
#include <limits>

namespace rl {

DeniedKeys::DeniedKeys(size_t capacity)
    : per_shard_(capacity / kShards > 0 ? capacity / kShards : 1) {}

int64_t DeniedKeys::steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

DeniedKeys::Shard& DeniedKeys::shard_for(std::string_view key) {
  return shards_[std::hash<std::string_view>{}(key) % kShards];
}

void DeniedKeys::end_probe_locked(Shard& shard, Entry& e,
                                  std::vector<std::function<void()>>& wake) {
  if (!e.probing) return;
  e.probing = false;
  for (auto& w : e.waiters) wake.push_back(std::move(w));
  e.waiters.clear();
  shard.probe_ended.notify_all();
}

void DeniedKeys::erase_locked(Shard& shard, std::unordered_map<std::string, Entry>::iterator it,
                              std::vector<std::function<void()>>& wake) {
  end_probe_locked(shard, it->second, wake);
  shard.entries.erase(it);
  size_.fetch_sub(1, std::memory_order_relaxed);
}

void DeniedKeys::run_all(std::vector<std::function<void()>>& wake) {
  for (auto& w : wake) w();
}

DeniedKeys::Look DeniedKeys::lookup(std::string_view key, int64_t cost, int64_t now_us,
                                    int64_t deadline_us) {
  if (size() == 0) return {};  // nothing denied: no lock, no hash lookup
  Shard& shard = shard_for(key);
  std::lock_guard lock(shard.mutex);
  auto it = shard.entries.find(std::string(key));
  if (it == shard.entries.end()) return {};
  Entry& e = it->second;
  if (cost < e.cost) return {};
  if (e.probing) {
    const bool ends_in_time = deadline_us == 0
                                  ? e.probe_deadline_us == 0
                                  : e.probe_deadline_us != 0 && e.probe_deadline_us <= deadline_us;
    if (!ends_in_time) return {};
    return {Found::probing, {}, e.probe_id};
  }
  if (now_us >= e.until_us) {  // Redis may admit it now: this caller asks it
    e.probing = true;
    e.probe_id = next_probe_id_.fetch_add(1, std::memory_order_relaxed);
    e.probe_deadline_us = deadline_us;
    return {Found::probe, {}, e.probe_id};
  }
  Verdict v = e.verdict;
  v.source = Source::deny_cache;
  v.retry_after_us = e.until_us == std::numeric_limits<int64_t>::max() ? -1 : e.until_us - now_us;
  v.reset_after_us = e.reset_at_us > now_us ? e.reset_at_us - now_us : 0;
  return {Found::denied, v, 0};
}

void DeniedKeys::remember(std::string_view key, int64_t cost, int64_t asked_at_us,
                          const Verdict& denial) {
  if (denial.allowed || denial.retry_after_us == 0) return;
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  Entry e;
  e.cost = cost;
  e.until_us = denial.retry_after_us < 0 ? kNever : asked_at_us + denial.retry_after_us;
  e.reset_at_us = asked_at_us + denial.reset_after_us;
  e.verdict = denial;
  std::vector<std::function<void()>> wake;
  {
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.entries.find(std::string(key));
    if (it != shard.entries.end()) {
      end_probe_locked(shard, it->second, wake);
      it->second = std::move(e);
    } else {
      if (shard.entries.size() >= per_shard_) {
        // Full: the first entry goes (any will do; they all end by themselves).
        erase_locked(shard, shard.entries.begin(), wake);
      }
      shard.entries.emplace(std::string(key), std::move(e));
      size_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  run_all(wake);
}

void DeniedKeys::forget(std::string_view key) {
  if (size() == 0) return;
  std::vector<std::function<void()>> wake;
  {
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.entries.find(std::string(key));
    if (it != shard.entries.end()) erase_locked(shard, it, wake);
  }
  run_all(wake);
}

void DeniedKeys::end_probe(std::string_view key, uint64_t id) {
  std::vector<std::function<void()>> wake;
  {
    Shard& shard = shard_for(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.entries.find(std::string(key));
    // The ran-out denial says nothing more: the key goes.
    if (it != shard.entries.end() && it->second.probing && it->second.probe_id == id)
      erase_locked(shard, it, wake);
  }
  run_all(wake);
}

bool DeniedKeys::on_probe_end(std::string_view key, uint64_t id, std::function<void()>& wake) {
  Shard& shard = shard_for(key);
  std::lock_guard lock(shard.mutex);
  auto it = shard.entries.find(std::string(key));
  if (it == shard.entries.end() || !it->second.probing || it->second.probe_id != id) return false;
  it->second.waiters.push_back(std::move(wake));
  return true;
}

void DeniedKeys::wait_probe_end(std::string_view key, uint64_t id) {
  Shard& shard = shard_for(key);
  std::unique_lock lock(shard.mutex);
  const std::string k(key);
  shard.probe_ended.wait(lock, [&] {
    auto it = shard.entries.find(k);
    return it == shard.entries.end() || !it->second.probing || it->second.probe_id != id;
  });
}

}  // namespace rl
