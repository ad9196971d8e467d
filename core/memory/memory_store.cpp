#include "memory_store.h"

#include <algorithm>
#include <array>
// GCC 12 misreads boost's memmove of a small_vector's inline buffer as an
// overread (a known false positive of -Wstringop-overread, which clang lacks).
#pragma GCC diagnostic push
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#include <boost/container/small_vector.hpp>
#pragma GCC diagnostic pop
#include <boost/unordered/unordered_flat_map.hpp>
#include <cstring>

#include "algorithms/draw_source.h"
#include "algorithms/fixed_window.h"
#include "algorithms/gcra.h"
#include "algorithms/sliding_log.h"
#include "algorithms/sliding_window.h"
#include "algorithms/suppressed.h"
#include "algorithms/token_bucket.h"

namespace rl {
namespace {

// Eight bytes per step with a multiply-xorshift mix: several times fewer
// instructions than std::hash's byte-oriented murmur on short keys.
[[gnu::always_inline]] inline uint64_t hash_of(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = (h ^ word) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  // The tail without a variable-length memcpy (a library call, then a
  // load that cannot be forwarded from its byte stores).
  uint64_t tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&tail, s.data() + s.size() - 8, 8);  // the last word, overlapping
  } else {
    for (size_t k = 0; k < s.size(); ++k) tail |= uint64_t{static_cast<uint8_t>(s[k])} << (8 * k);
  }
  // murmur3's finalizer: every bit of the key reaches every bit of the
  // hash, so the table needs no mixing of its own (is_avalanching).
  h ^= tail;
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// A key with its hash, computed once for both the shard and its table.
struct HashedKey {
  std::string_view key;
  size_t hash;
};

struct KeyHash {
  using is_transparent = void;
  using is_avalanching = void;
  size_t operator()(std::string_view s) const { return hash_of(s); }
  size_t operator()(const HashedKey& k) const { return k.hash; }
};

struct KeyEqual {
  using is_transparent = void;
  bool operator()(const std::string& a, const std::string& b) const { return a == b; }
  bool operator()(const std::string& a, const HashedKey& b) const { return a == b.key; }
  bool operator()(const HashedKey& a, const std::string& b) const { return a.key == b; }
};

constexpr size_t kShards = 64;
constexpr size_t kFirstSweepAt = 64;

LeaseArgs lease_args(const Call& c) {
  return LeaseArgs{c.granted_at_us, c.lease_slice, c.lease_hold_us};
}

}  // namespace

class MemoryStore::Table {
 public:
  virtual ~Table() = default;
  // `chance`: suppressed's draw and factor reuse; the other algorithms ignore it.
  virtual Verdict run(Op op, std::string_view key, int64_t cost, int64_t now, const Chance& chance,
                      const LeaseArgs& lease) = 0;
  virtual size_t size() = 0;
};

namespace {

// kOneRate: the usual single limit, whose state sits in the table's slot
// itself (a slot of 48 bytes for gcra: the cache misses of a lookup are most
// of a memory:// decision).
template <class Algo, bool kOneRate>
class TableOf final : public MemoryStore::Table {
 public:
  TableOf(std::vector<Rate> rates, size_t max_keys)
      : rates_(std::move(rates)),
        empty_(empty_states(rates_.size())),
        shard_cap_(std::max<size_t>(1, (max_keys + kShards - 1) / kShards)) {}

  Verdict run(Op op, std::string_view key, int64_t cost, int64_t now, const Chance& chance,
              const LeaseArgs& lease) override {
    const size_t hash = hash_of(key);
    // Bits the shard's table does not use: it takes the top ones for the
    // position and the low byte for its metadata.
    Shard& shard = shards_[(hash >> 8) % kShards];
    std::lock_guard lock(shard.mutex);
    auto it = shard.entries.find(HashedKey{key, hash});
    if (it == shard.entries.end()) {
      // An unknown key is an empty one: decide on a copy, and store it only
      // when the operation recorded something.
      States states = empty_;
      bool changed = false;
      Verdict v = apply_op(op, states, now, cost, chance, lease, changed);
      if (changed && op != Op::reset && v.reset_after_us > 0) {
        insert(shard, key, std::move(states), now);
      }
      return v;
    }
    bool changed = false;
    Verdict v = apply_op(op, it->second, now, cost, chance, lease, changed);
    if (changed && idle_at(it->second) <= now) shard.entries.erase(it);
    return v;
  }

  size_t size() override {
    size_t total = 0;
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mutex);
      total += s.entries.size();
    }
    return total;
  }

 private:
  // One state per rate; the usual single limit needs no allocation of its
  // own. A key's idle time is not stored: sweeps compute it (a slot 8 bytes
  // smaller is worth more than a sweep's arithmetic).
  using States = std::conditional_t<kOneRate, std::array<typename Algo::State, 1>,
                                    boost::container::small_vector<typename Algo::State, 1>>;
  static States empty_states(size_t n) {
    if constexpr (kOneRate) {
      return States{};
    } else {
      return States(n);
    }
  }
  // Aligned to cache lines: threads locking neighbouring shards do not
  // write each other's lines (a shard is 96 bytes; unaligned, most lines
  // held parts of two shards).
  struct alignas(64) Shard {
    std::mutex mutex;
    // Open addressing with keys and states inline: one cache miss per lookup
    // of a short key (std::unordered_map chases a node per key).
    boost::unordered_flat_map<std::string, States, KeyHash, KeyEqual> entries;
    size_t sweep_at = kFirstSweepAt;
  };

  Verdict apply_op(Op op, States& states, int64_t now, int64_t cost, const Chance& chance,
                   const LeaseArgs& lease, bool& changed) {
    if constexpr (std::is_same_v<Algo, Suppressed>) {
      return Suppressed::apply(op, states, rates_, now, cost, chance, changed);
    } else {
      return apply<Algo>(op, states, rates_, now, cost, changed, lease);
    }
  }

  // From then on the key equals an empty one.
  int64_t idle_at(const States& states) const {
    if constexpr (kOneRate) return Algo::idle_at(states[0], rates_[0]);
    int64_t at = 0;
    for (size_t i = 0; i < rates_.size(); ++i)
      at = std::max(at, Algo::idle_at(states[i], rates_[i]));
    return at;
  }

  // Sweeping when the shard doubles since the last sweep keeps it within
  // about twice its live keys, at O(1) amortized cost per insert. A shard
  // at its cap (max_keys / 64) that is still full after the sweep evicts.
  void insert(Shard& shard, std::string_view key, States states, int64_t now) {
    if (shard.entries.size() + 1 >= shard.sweep_at || shard.entries.size() >= shard_cap_) {
      erase_if(shard.entries, [&](const auto& kv) { return idle_at(kv.second) <= now; });
      if (shard.entries.size() >= shard_cap_) evict_nearest_idle(shard);
      shard.sweep_at = std::max(kFirstSweepAt, 2 * (shard.entries.size() + 1));
    }
    shard.entries.emplace(std::string(key), std::move(states));
  }

  // Forgets the eighth of the shard's keys that would be idle soonest: they
  // are the nearest to an empty key, so forgetting them admits the least
  // extra, and a flood of new keys cannot reset a key that used its quota
  // before it resets the flood's own keys. One pass frees room for
  // cap / 8 inserts: O(8) amortized per insert at the cap.
  void evict_nearest_idle(Shard& shard) {
    const size_t count = std::max<size_t>(1, shard.entries.size() / 8);
    std::vector<int64_t> idle;
    idle.reserve(shard.entries.size());
    for (const auto& kv : shard.entries) idle.push_back(idle_at(kv.second));
    std::nth_element(idle.begin(), idle.begin() + (count - 1), idle.end());
    const int64_t threshold = idle[count - 1];
    size_t left = count;
    erase_if(shard.entries, [&](const auto& kv) {
      if (left == 0 || idle_at(kv.second) > threshold) return false;
      --left;
      return true;
    });
  }

  const std::vector<Rate> rates_;
  const States empty_;
  const size_t shard_cap_;
  std::array<Shard, kShards> shards_;
};

template <class Algo>
std::shared_ptr<MemoryStore::Table> table_of(const Policy& p, size_t max_keys) {
  if (p.rates.size() == 1) return std::make_shared<TableOf<Algo, true>>(p.rates, max_keys);
  return std::make_shared<TableOf<Algo, false>>(p.rates, max_keys);
}

std::shared_ptr<MemoryStore::Table> make_table(const Policy& p, size_t max_keys) {
  switch (p.algorithm) {
    case Algorithm::gcra: return table_of<Gcra>(p, max_keys);
    case Algorithm::token_bucket: return table_of<TokenBucket>(p, max_keys);
    case Algorithm::sliding_log: return table_of<SlidingLog>(p, max_keys);
    case Algorithm::sliding_window: return table_of<SlidingWindow>(p, max_keys);
    case Algorithm::fixed_window: return table_of<FixedWindow>(p, max_keys);
    case Algorithm::suppressed: return table_of<Suppressed>(p, max_keys);
  }
  throw Error(Code::internal, "unknown algorithm");
}

Outcome shutdown_outcome() {
  return Outcome::failure(Code::shutdown, "store: closed");
}

class MemoryBackend final : public Backend, public std::enable_shared_from_this<MemoryBackend> {
 public:
  MemoryBackend(std::shared_ptr<MemoryStore> store, std::shared_ptr<MemoryStore::Table> table,
                const Policy& policy)
      : store_(std::move(store)),
        clock_(store_->clock()),
        stats_(*store_->stats()),
        table_(std::move(table)),
        draws_(policy.algorithm == Algorithm::suppressed
                   ? std::make_unique<DrawSource>(policy.seed, store_->clock().is_manual())
                   : nullptr),
        factor_reuse_us_(policy.factor_reuse_us) {}

  // Nothing here waits, so no deadline can pass: timeout_us is not needed.
  Outcome run(Op op, std::string_view key, int64_t cost, int64_t /*timeout_us*/) override {
    if (store_->closed()) return shutdown_outcome();
    return decide(op, key, cost);
  }

  // One call, closed or not: a batch checks once, so that a close never
  // splits it into decided and refused requests.
  Outcome decide(Op op, std::string_view key, int64_t cost, const LeaseArgs& lease = {}) {
    Outcome o;
    Chance chance;
    if (draws_) chance = Chance{draws_->next(), factor_reuse_us_};
    o.verdict = table_->run(op, key, cost, clock_.now_us(), chance, lease);
    stats_.count(o.code, o.verdict);
    return o;
  }

  void run_async(Call call, Completion done) override {
    // The task owns the backend: the limiter may be freed before it runs.
    auto task = [self = shared_from_this(), call = std::move(call), done](bool shutting_down) {
      if (shutting_down || self->store_->closed()) return done(shutdown_outcome());
      done(self->decide(call.op, call.key, call.cost, lease_args(call)));
    };
    if (store_->closed() || !store_->executor().post(std::move(task))) {
      throw Error(Code::shutdown, "store: closed");
    }
  }

  // Decided inline: nothing here waits, so no thread needs to.
  std::vector<Outcome> run_batch(std::vector<Call> calls) override {
    if (store_->closed()) throw Error(Code::shutdown, "store: closed");
    std::vector<Outcome> outcomes;
    outcomes.reserve(calls.size());
    for (const Call& c : calls) outcomes.push_back(decide(c.op, c.key, c.cost, lease_args(c)));
    return outcomes;
  }

  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override {
    auto task = [self = shared_from_this(), calls = std::move(calls), done](bool shutting_down) {
      if (shutting_down || self->store_->closed()) return done(shutdown_outcome(), {});
      std::vector<Outcome> outcomes;
      outcomes.reserve(calls.size());
      for (const Call& c : calls) {
        outcomes.push_back(self->decide(c.op, c.key, c.cost, lease_args(c)));
      }
      done(Outcome{}, std::move(outcomes));
    };
    if (store_->closed() || !store_->executor().post(std::move(task))) {
      throw Error(Code::shutdown, "store: closed");
    }
  }

 private:
  std::shared_ptr<MemoryStore> store_;
  // The store's, held here: two virtual calls fewer per decision.
  Clock& clock_;
  StoreStats& stats_;
  std::shared_ptr<MemoryStore::Table> table_;
  const std::unique_ptr<DrawSource> draws_;  // suppressed only
  const int64_t factor_reuse_us_;
};

}  // namespace

MemoryStore::MemoryStore(std::unique_ptr<Clock> clock, size_t max_keys)
    : clock_(std::move(clock)), max_keys_(max_keys) {}

MemoryStore::~MemoryStore() {
  close();
}

std::shared_ptr<Backend> MemoryStore::backend_for(const Policy& policy) {
  std::lock_guard lock(tables_mutex_);
  auto& table = tables_[policy.identity()];
  if (!table) table = make_table(policy, max_keys_);
  return std::make_shared<MemoryBackend>(shared_from_this(), table, policy);
}

void MemoryStore::close() {
  closed_.store(true, std::memory_order_release);
  executor_.shutdown();
}

size_t MemoryStore::key_count() {
  std::lock_guard lock(tables_mutex_);
  size_t total = 0;
  for (auto& [id, table] : tables_) total += table->size();
  return total;
}

}  // namespace rl
