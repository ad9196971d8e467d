#include "lease_backend.h"

#include <algorithm>

#include "lease_rules.h"
#include "wait_for.h"
#include "wide.h"

namespace rl {

LeaseBackend::LeaseBackend(std::shared_ptr<Store> store, std::shared_ptr<Backend> inner,
                           const Policy& policy, const LeaseConfig& config)
    : store_(std::move(store)),
      inner_(std::move(inner)),
      policy_(policy),
      lease_us_(config.lease_us),
      threshold_units_(std::max<int64_t>(
          1, static_cast<int64_t>((wide(config.threshold_per_s) * config.lease_us + 999999) /
                                  1000000))),
      max_slice_(static_cast<int64_t>(wide(policy.rates.front().limit) * config.share_numerator /
                                      config.share_denominator)),
      edge_width_(lease_edge_width(policy)),
      holds_(lease_holds(policy)),
      releases_used_up_(lease_releases_used_up(policy)),
      stats_(store_->stats() ? &store_->stats()->leases : nullptr) {}

LeaseBackend::Shard& LeaseBackend::shard_of(std::string_view key) {
  return shards_[Hash{}(key) % kShards];
}

LeaseBackend::Entry* LeaseBackend::entry_locked(Shard& shard, std::string_view key, int64_t now) {
  if (auto it = shard.keys.find(key); it != shard.keys.end()) return &it->second;
  if (shard.keys.size() >= kMaxKeysPerShard) {
    // Forget keys gone cold: no slice, nothing asked for two periods.
    std::erase_if(shard.keys, [&](const auto& kv) {
      const Entry& e = kv.second;
      return e.slice_left == 0 && !e.granting && now - e.period_start > 2 * lease_us_;
    });
    if (shard.keys.size() >= kMaxKeysPerShard) return nullptr;  // untracked: no lease
  }
  Entry& e = shard.keys[std::string(key)];
  e.period_start = now;
  return &e;
}

namespace {

// A release's answer: the store took the units off (not when their window
// was gone or reset, nor an answer of on_failure).
bool taken_off(const Outcome& o) {
  return o.code == Code::ok && o.verdict.source == Source::store &&
         o.verdict.next_retry_after_us == 1;
}

}  // namespace

LeaseBackend::~LeaseBackend() {
  std::vector<std::pair<std::string, GiveBack>> back;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (auto& [key, e] : shard.keys) {
      if (e.slice_until == 0) continue;
      const GiveBack g = end_slice(e);
      if (worth_releasing(g)) back.emplace_back(key, g);
    }
  }
  if (!store_->on_own_thread()) {
    // Waited for: a release left in flight would hold the store past its
    // owner's end, and the process could exit under it.
    for (const auto& [key, g] : back) hand_back(key, g, true);
    return;
  }
  // On the store's own thread nothing may wait, and no completion may reach
  // this object: the store's total counts what comes back.
  StoreStats* total = store_->stats();
  for (const auto& [key, g] : back) {
    try {
      inner_->run_async(release_call(key, g),
                        [store = store_, total, units = g.units](Outcome&& o) {
                          if (total && taken_off(o)) total->leases.returned(units);
                        });
    } catch (const Error&) {  // the store is closing: the units stay counted
    }
  }
}

LeaseBackend::GiveBack LeaseBackend::end_slice(Entry& e) {
  stats_.ended(e.slice_left);
  GiveBack g{e.slice_left, e.granted_at, e.slice_size};
  e.slice_size = 0;
  e.slice_left = 0;
  e.slice_used = 0;
  e.slice_until = 0;
  return g;
}

void LeaseBackend::hand_back(std::string_view key, const GiveBack& g, bool wait) {
  if (!worth_releasing(g)) return;
  Call c = release_call(key, g);
  auto counted = [this, units = g.units](const Outcome& o) {
    if (taken_off(o)) stats_.returned(units);
  };
  try {
    if (wait && !store_->on_own_thread()) {
      counted(wait_for<Outcome>([&](auto done) { inner_->run_async(std::move(c), done); }));
      return;
    }
    inner_->run_async(std::move(c),
                      [self = shared_from_this(), counted](Outcome&& o) { counted(o); });
  } catch (const Error&) {  // closed: the units stay counted until the window ends
  }
}

void LeaseBackend::end_when_due(const std::string& key, uint64_t slice, int64_t delay_us) {
  // Under the manual clock a lease ends only at a call (or the limiter's
  // end): a timer on real time would race the clock a test sets.
  if (store_->clock().is_manual()) return;
  std::weak_ptr<LeaseBackend> weak = weak_from_this();
  store_->post_after(delay_us, [weak, key, slice](bool shutting_down) {
    auto self = weak.lock();
    if (!self || shutting_down) return;
    Shard& shard = self->shard_of(key);
    GiveBack g;
    int64_t again = 0;
    {
      std::lock_guard lock(shard.mutex);
      auto it = shard.keys.find(key);
      if (it == shard.keys.end() || it->second.slices != slice || it->second.slice_until == 0) {
        return;
      }
      const int64_t now = self->store_->clock().now_us();
      if (it->second.slice_until <= now) {
        g = self->end_slice(it->second);
      } else {
        again = it->second.slice_until - now;
      }
    }
    if (again > 0) return self->end_when_due(key, slice, again);
    self->hand_back(key, g, false);
  });
}

Verdict LeaseBackend::from_slice(const Entry& e, int64_t now) const {
  Verdict v;
  v.allowed = true;
  v.limit = policy_.rates.front().limit;
  v.remaining = e.slice_left;  // at least this many more are admitted here
  v.reset_after_us = std::max<int64_t>(0, e.reset_at - now);
  return v;
}

LeaseBackend::Plan LeaseBackend::plan(Op op, std::string_view key, int64_t cost) {
  Plan p;
  if (op == Op::peek) return p;
  Shard& shard = shard_of(key);
  std::lock_guard lock(shard.mutex);
  const int64_t now = store_->clock().now_us();
  if (op == Op::reset) {
    if (auto it = shard.keys.find(key); it != shard.keys.end()) {
      end_slice(it->second);  // nothing to hand back: the store forgets the key
      ++it->second.resets;    // a slice asked for before it is not used
    }
    return p;
  }
  Entry* e = entry_locked(shard, key, now);
  if (e == nullptr) return p;
  const bool live = e->slice_until > now;
  if (op == Op::refund) {
    // Units taken from the slice go back to it: Redis still counts them.
    if (live && cost <= e->slice_used) {
      e->slice_used -= cost;
      e->slice_left += cost;
      p.what = Plan::decided;
      p.verdict = from_slice(*e, now);
      return p;
    }
    p.give_back = end_slice(*e);  // a refund that does not fit ends the lease
    return p;
  }
  // This process's own rate, per lease_ms: every acquire it asks for,
  // decided here or not.
  if (now - e->period_start >= lease_us_) {
    e->last_period_units = now - e->period_start < 2 * lease_us_ ? e->period_units : 0;
    e->period_start = now;
    e->period_units = 0;
  }
  e->period_units += cost;
  if (live && e->slice_left >= cost) {
    e->slice_left -= cost;
    e->slice_used += cost;
    p.what = Plan::decided;
    p.verdict = from_slice(*e, now);
    return p;
  }
  if (e->slice_until != 0) p.give_back = end_slice(*e);  // by time, its window's edge, run out
  const int64_t expected = std::max(e->last_period_units, e->period_units);
  if (expected < threshold_units_ || e->granting || now < e->no_lease_until) return p;
  // About lease_ms of that rate, or what is left of the window until its
  // edge if that is shorter (the lease ends there).
  int64_t span = lease_us_;
  if (e->edge_hint != 0) {
    const int64_t into = ((now - e->edge_hint) % edge_width_ + edge_width_) % edge_width_;
    span = std::min(span, edge_width_ - into);
  }
  const int64_t slice =
      std::min(max_slice_, static_cast<int64_t>(wide(expected) * span / lease_us_));
  if (slice <= cost) return p;  // no use in a slice this call alone spends
  e->granting = true;
  p.what = Plan::grant;
  p.slice = slice;
  p.sent_at = now;
  p.resets = e->resets;
  return p;
}

bool LeaseBackend::granted(std::string_view key, const Plan& plan, int64_t cost, const Outcome& o,
                           Outcome& out) {
  Shard& shard = shard_of(key);
  GiveBack backs[2];  // sent once the lock is released
  uint64_t timer_slice = 0;
  int64_t timer_after = 0;
  bool served = false;
  {
    std::lock_guard lock(shard.mutex);
    auto it = shard.keys.find(key);
    Entry* e = it == shard.keys.end() ? nullptr : &it->second;
    if (e != nullptr) e->granting = false;
    const bool admitted =
        o.code == Code::ok && o.verdict.allowed && o.verdict.source == Source::store;
    if (!admitted) {
      // A denial, or an outage (whatever on_failure gave): no lease for a while.
      if (e != nullptr) {
        // Doubled per denial in a row, but a window's room comes back at its
        // edge (sub-window: in part): no later than the next edge seen.
        int64_t wait = lease_us_ << e->denied_in_a_row;
        if (e->edge_hint != 0) {
          const int64_t into =
              ((plan.sent_at - e->edge_hint) % edge_width_ + edge_width_) % edge_width_;
          wait = std::max(lease_us_, std::min(wait, edge_width_ - into));
        }
        e->no_lease_until = plan.sent_at + wait;
        e->denied_in_a_row = std::min(e->denied_in_a_row + 1, kMaxBackoffDoublings);
      }
      return false;
    }
    served = true;
    if (e != nullptr) e->denied_in_a_row = 0;
    stats_.taken(plan.slice);
    const int64_t now = store_->clock().now_us();
    // The buckets and the log have no edge: the lease lasts lease_ms.
    const int64_t edge_after = holds_ ? lease_us_ : lease_edge_after(policy_, o.verdict);
    const int64_t granted_at = o.verdict.next_retry_after_us;  // Op::lease's tag
    out = o;
    out.verdict.remaining = plan.slice - cost;
    out.verdict.next_retry_after_us = 0;
    if (e == nullptr || edge_after == 0 || e->resets != plan.resets) {
      stats_.ended(plan.slice - cost);  // covered, but not usable here
      // After a reset through this limiter the store may hold a newer state:
      // the release is a no-op there, but there is nothing to hand back.
      if (e == nullptr || e->resets == plan.resets) {
        backs[0] = {plan.slice - cost, granted_at, plan.slice};
      }
    } else {
      if (e->slice_until != 0) backs[0] = end_slice(*e);  // one granted meanwhile: keep the newer
      // The store decided after sent_at, so the edge is no earlier than
      // sent_at + edge_after (clocks that tick at one rate; docs/algorithms.md).
      if (!holds_) e->edge_hint = plan.sent_at + edge_after;
      e->slice_until = plan.sent_at + std::min(lease_us_, edge_after);
      e->slice_size = plan.slice;
      e->slice_left = plan.slice - cost;
      e->slice_used = cost;
      e->reset_at = now + o.verdict.reset_after_us;
      e->granted_at = granted_at;
      ++e->slices;
      if (e->slice_until <= now) {
        backs[1] = end_slice(*e);
      } else {
        timer_slice = e->slices;
        timer_after = e->slice_until - now;
      }
    }
  }
  for (const GiveBack& g : backs) hand_back(key, g, false);
  if (timer_slice != 0) end_when_due(std::string(key), timer_slice, timer_after);
  return served;
}

Outcome LeaseBackend::run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
  const Plan p = plan(op, key, cost);
  hand_back(key, p.give_back, true);
  if (p.what == Plan::decided) {
    if (store_->closed()) return Outcome::failure(Code::shutdown, "store: closed");
    Outcome o;
    o.verdict = p.verdict;
    stats_.decided();
    if (StoreStats* s = store_->stats()) s->count(Code::ok, o.verdict);
    return o;
  }
  if (p.what == Plan::grant && store_->on_own_thread()) {
    // Nothing may wait here: no slice (and none for lease_ms).
    Outcome ignored;
    granted(key, p, cost, Outcome::failure(Code::internal, ""), ignored);
  } else if (p.what == Plan::grant) {
    Outcome out;
    Outcome o;
    try {
      Call c{Op::lease, std::string(key), p.slice, timeout_us};
      c.lease_hold_us = lease_us_;
      o = wait_for<Outcome>([&](auto done) { inner_->run_async(std::move(c), done); });
    } catch (...) {
      granted(key, p, cost, Outcome::failure(Code::internal, ""), out);
      throw;
    }
    if (granted(key, p, cost, o, out)) return out;
  }
  return inner_->run(op, key, cost, timeout_us);
}

void LeaseBackend::run_async(Call call, Completion done) {
  const Plan p = plan(call.op, call.key, call.cost);
  if (!worth_releasing(p.give_back)) return proceed(p, std::move(call), std::move(done));
  // The release goes first, and the call once it is answered: the store
  // sees them in that order, as a sync call does.
  Call back = release_call(call.key, p.give_back);
  auto pending = std::make_shared<std::pair<Call, Completion>>(std::move(call), std::move(done));
  try {
    inner_->run_async(std::move(back), [self = shared_from_this(), p, pending,
                                        units = p.give_back.units](Outcome&& o) {
      if (taken_off(o)) self->stats_.returned(units);
      try {
        self->proceed(p, pending->first, pending->second);
      } catch (const Error& e) {
        pending->second(Outcome::failure(e.code(), e.what()));
      }
    });
  } catch (const Error&) {  // closed: the units stay counted
    proceed(p, std::move(pending->first), std::move(pending->second));
  }
}

void LeaseBackend::proceed(const Plan& p, Call call, Completion done) {
  if (p.what == Plan::decided) {
    stats_.decided();
    if (StoreStats* s = store_->stats()) s->count(Code::ok, p.verdict);
    // Completions never run inside the call that started them.
    if (!store_->post_after(0, [done = std::move(done), v = p.verdict](bool shutting_down) {
          if (shutting_down) return done(Outcome::failure(Code::shutdown, "store: closed"));
          Outcome o;
          o.verdict = v;
          done(std::move(o));
        })) {
      throw Error(Code::shutdown, "store: closed");
    }
    return;
  }
  if (p.what != Plan::grant) return inner_->run_async(std::move(call), std::move(done));
  Call slice_call = call;
  slice_call.op = Op::lease;
  slice_call.cost = p.slice;
  slice_call.lease_hold_us = lease_us_;
  auto self = shared_from_this();
  auto pending = std::make_shared<std::pair<Call, Completion>>(std::move(call), std::move(done));
  try {
    inner_->run_async(std::move(slice_call), [self, p, pending](Outcome&& o) {
      Outcome out;
      Call& c = pending->first;
      if (self->granted(c.key, p, c.cost, o, out)) return pending->second(std::move(out));
      try {
        self->inner_->run_async(std::move(c), pending->second);
      } catch (const Error& e) {
        pending->second(Outcome::failure(e.code(), e.what()));
      }
    });
  } catch (...) {
    Outcome ignored;
    granted(pending->first.key, p, pending->first.cost, Outcome::failure(Code::internal, ""),
            ignored);
    throw;
  }
}

void LeaseBackend::run_batch_async(std::vector<Call> calls, BatchCompletion done) {
  inner_->run_batch_async(std::move(calls), std::move(done));
}

std::vector<Outcome> LeaseBackend::run_batch(std::vector<Call> calls) {
  return inner_->run_batch(std::move(calls));
}

}  // namespace rl
