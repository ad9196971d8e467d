#include "failover_store.h"

#include "failover_backend.h"

namespace rl {
namespace {

// The local fallback keeps time with the store it stands in for (so a
// manual clock moves both).
class ClockOf final : public Clock {
 public:
  explicit ClockOf(const Clock& clock) : clock_(clock) {}
  int64_t now_us() const override { return clock_.now_us(); }
  bool is_manual() const override { return clock_.is_manual(); }

 private:
  const Clock& clock_;
};

}  // namespace

FailoverStore::FailoverStore(std::shared_ptr<Store> inner, BreakerOptions breaker,
                             size_t local_max_keys)
    : inner_(std::move(inner)),
      breakers_(breaker, inner_->clock()),
      local_max_keys_(local_max_keys) {}

FailoverStore::~FailoverStore() {
  close();
}

std::shared_ptr<Backend> FailoverStore::backend_for(const Policy& policy) {
  return failover_backend(shared_from_this(), inner_->backend_for(policy), policy);
}

void FailoverStore::close() {
  inner_->close();
  std::lock_guard lock(local_mutex_);
  if (local_) local_->close();
}

MemoryStore& FailoverStore::local() {
  std::lock_guard lock(local_mutex_);
  if (!local_) {
    local_ =
        std::make_shared<MemoryStore>(std::make_unique<ClockOf>(inner_->clock()), local_max_keys_);
  }
  return *local_;
}

StatsView FailoverStore::stats_view() {
  StatsView view{&stats_};
  view.has_round_trips = true;
  view.decides_with = decides_with_text(inner_->decides_with());
  breakers_.fill(view, inner_->nodes());
  return view;
}

}  // namespace rl
