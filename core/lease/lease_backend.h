// Leases (limiter setting lease=auto; docs/algorithms.md, Leases): a
// Backend in front of the store's. Per key it measures this process's own
// rate; past lease_threshold it acquires a slice (about lease_ms of that
// rate, at most lease_share of the limit) in one store call, which the
// store counts as admissions at once, and decides the key's acquires from
// it here, with no store call, until the lease ends: at lease_ms after the
// grant, at the edge of the window (or sub-window) the slice was counted in,
// when the slice runs out, or on a reset or a refund through this limiter
// that does not fit the slice, or when the limiter goes. Then the unused
// rest goes back in one store call (Op::release, tagged with the grant's
// store time), which the store takes off only in the window (sub-window)
// and the state the slice was counted in: past that window's edge, or after
// a reset, it changes nothing. gcra and token_bucket have no edges: the
// store holds a slice's units out of the bucket for lease_ms (lease_hold.h),
// and every slice is released, used up or not, to end its hold early.
// sliding_log has none either: the store records a slice at its lease's
// end (lease_ms after the grant), and takes a release off that record.
// Peeks and batches pass through.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lease_stats.h"
#include "store.h"

namespace rl {

class LeaseBackend final : public Backend, public std::enable_shared_from_this<LeaseBackend> {
 public:
  // `policy` passed check_lease.
  LeaseBackend(std::shared_ptr<Store> store, std::shared_ptr<Backend> inner, const Policy& policy,
               const LeaseConfig& config);

  Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) override;
  void run_async(Call call, Completion done) override;
  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override;
  std::vector<Outcome> run_batch(std::vector<Call> calls) override;
  NodeId node_of(std::string_view key) override { return inner_->node_of(key); }

  const LeaseStats& stats() const { return stats_; }
  // Hands back every slice's unused units (Limiter's destructor).
  ~LeaseBackend() override;

 private:
  // One key's rate and slice.
  struct Entry {
    int64_t period_start = 0;  // this process's units on the key, per lease_ms
    int64_t period_units = 0;
    int64_t last_period_units = 0;
    int64_t slice_size = 0;      // units the slice was granted with
    int64_t slice_left = 0;      // units of the slice not yet used
    int64_t slice_used = 0;      // used from it (what a refund may give back)
    int64_t slice_until = 0;     // the lease ends here (local clock)
    int64_t reset_at = 0;        // the slice's window resets here (local clock)
    int64_t edge_hint = 0;       // a window edge seen before (0: none): sizes slices
    int64_t granted_at = 0;      // the store's time of the slice's grant (its tag)
    uint64_t slices = 0;         // slices granted: which one a timer was set for
    int64_t no_lease_until = 0;  // after a denial or an outage: plain calls
    int denied_in_a_row = 0;     // grants denied since the last one granted
    bool granting = false;       // a slice is being asked for
    uint64_t resets = 0;         // resets through this limiter
  };
  // A slice's unused units to hand back, once the key's lock is released.
  struct GiveBack {
    int64_t units = 0;
    int64_t granted_at = 0;
    int64_t slice = 0;  // the slice's whole size (its hold, for the buckets)
  };
  // Whether a lease's end calls the store: to give units back, or to end
  // its hold.
  bool worth_releasing(const GiveBack& g) const {
    return g.units > 0 || (releases_used_up_ && g.slice > 0);
  }
  Call release_call(std::string_view key, const GiveBack& g) const {
    Call c{Op::release, std::string(key), g.units, 0, g.granted_at};
    c.lease_slice = g.slice;
    return c;
  }
  // What a call on a key should do, decided under the key's lock.
  struct Plan {
    GiveBack give_back;  // a lease that ended here, before anything else
    enum { store, decided, grant } what = store;
    Verdict verdict;      // decided
    int64_t slice = 0;    // grant: units to ask for
    int64_t sent_at = 0;  // grant: the local time before the store call
    uint64_t resets = 0;  // grant: the key's resets when it was asked for
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, Entry, Hash, std::equal_to<>> keys;
  };
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxKeysPerShard = 4096;
  // After a denied grant the key asks again no sooner than lease_ms later,
  // doubled per denial in a row up to this many times (or until the next
  // window or sub-window edge, if that comes first and after lease_ms): a
  // key held over its limit, where a slice rarely fits, costs few extra
  // store calls.
  static constexpr int kMaxBackoffDoublings = 4;

  Shard& shard_of(std::string_view key);
  // Under the shard's lock: the key's entry, or nullptr when the shard is full.
  Entry* entry_locked(Shard& shard, std::string_view key, int64_t now);
  Plan plan(Op op, std::string_view key, int64_t cost);
  // Ends the lease; what is left of the slice to hand back (nothing after
  // a reset: the store forgot it).
  GiveBack end_slice(Entry& e);
  // run_async after the plan (and the release it asked for, if any).
  void proceed(const Plan& p, Call call, Completion done);
  // Sends a release: sync (from run, on a caller's thread) or not.
  void hand_back(std::string_view key, const GiveBack& g, bool wait);
  // After a grant: ends the lease when it is due even if the key goes idle.
  void end_when_due(const std::string& key, uint64_t slice, int64_t delay_us);
  Verdict from_slice(const Entry& e, int64_t now) const;
  // Takes the store's answer on a slice. True, with the call's outcome in
  // `out`, when the slice served the call; false: the call goes to the store
  // on its own.
  bool granted(std::string_view key, const Plan& plan, int64_t cost, const Outcome& o,
               Outcome& out);

  std::shared_ptr<Store> store_;
  std::shared_ptr<Backend> inner_;
  Policy policy_;
  int64_t lease_us_;
  int64_t threshold_units_;  // per lease_ms
  int64_t max_slice_;
  int64_t edge_width_;
  bool holds_;
  bool releases_used_up_;
  std::array<Shard, kShards> shards_;
  LeaseStats stats_;
};

}  // namespace rl
