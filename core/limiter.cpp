#include "limiter.h"

#include "deny_cache/deny_cache_backend.h"
#include "lease/lease_backend.h"
#include "lease/lease_rules.h"
#include "wait.h"
#include "wait_for.h"

namespace rl {

namespace {

// The store's backend, behind the denied-key cache when the limiter has one.
std::shared_ptr<Backend> backend_of(const std::shared_ptr<Store>& store, const Policy& policy,
                                    const Settings& settings) {
  std::shared_ptr<Backend> backend = store->backend_for(policy);
  const int64_t capacity = settings.limiter().deny_cache_keys;
  // In process there is no round trip to spare; suppressed denies by a
  // draw, so a denial says nothing certain about the next call.
  if (capacity == 0 || store->in_process() || policy.algorithm == Algorithm::suppressed)
    return backend;
  return std::make_shared<DenyCacheBackend>(store, std::move(backend),
                                            static_cast<size_t>(capacity));
}

}  // namespace

Limiter::Limiter(std::shared_ptr<Store> store, const Settings& settings)
    : store_(std::move(store)),
      policy_(Policy::from(settings)),
      backend_(backend_of(store_, policy_, settings)) {
  check_lease(policy_, settings);
  if (settings.limiter().lease.on) {
    lease_ = std::make_shared<LeaseBackend>(store_, backend_, policy_, settings.limiter().lease);
    backend_ = lease_;
  }
}

LeaseCounts Limiter::lease_stats() const {
  return lease_ ? lease_->stats().snapshot() : LeaseCounts{};
}

namespace {

// The checks' failures, out of line: the checks run on every call, and
// building a message inline made each of them save six registers and
// reserve a frame even when it passed.
[[noreturn, gnu::cold, gnu::noinline]] void fail_key(std::string_view key, std::string_view what) {
  if (key.empty()) fail_invalid(std::string(what) + ": is empty");
  fail_invalid(std::string(what) + ": " + std::to_string(key.size()) +
               " bytes is longer than the maximum of 512");
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_cost(int64_t cost, int64_t min,
                                                      std::string_view what) {
  if (cost < min) {
    fail_invalid(std::string(what) + ": " + std::to_string(cost) +
                 (cost < 0 ? " is negative" : " means nothing") + "; it must be at least " +
                 std::to_string(min));
  }
  fail_invalid(std::string(what) + ": " + std::to_string(cost) +
               " is larger than the maximum 2^40");
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_timeout(int64_t timeout_us,
                                                         std::string_view what) {
  fail_invalid(std::string(what) + ": " + std::to_string(timeout_us) + " is negative");
}

}  // namespace

void Limiter::check_key(std::string_view key, std::string_view what) {
  if (key.empty() || key.size() > kMaxKeyLength) [[unlikely]]
    fail_key(key, what);
}

void Limiter::check_cost(Op op, int64_t cost, std::string_view what) {
  if (op == Op::reset) return;
  const int64_t min = op == Op::peek ? 0 : 1;
  if (cost < min || cost > kMaxLimit) [[unlikely]]
    fail_cost(cost, min, what);
}

void Limiter::check_timeout(int64_t timeout_us, std::string_view what) {
  if (timeout_us < 0) [[unlikely]]
    fail_timeout(timeout_us, what);
}

Outcome Limiter::run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
  check_key(key);
  check_cost(op, cost);
  check_timeout(timeout_us, "request.timeout_us");
  return backend_->run(op, key, cost, timeout_us);
}

std::shared_ptr<Wait> Limiter::acquire_wait_async(Call call, int64_t wait_us, Completion done) {
  check_timeout(wait_us, "timeout_us");
  check_key(call.key);
  check_cost(Op::acquire, call.cost);
  check_timeout(call.timeout_us, "request.timeout_us");
  call.op = Op::acquire;
  const int64_t deadline = store_->clock().now_us() + std::min(wait_us, kMaxTime);
  auto wait = std::make_shared<Wait>(store_, backend_, std::move(call), deadline, std::move(done));
  wait->start();
  return wait;
}

Outcome Limiter::acquire_wait(Call call, int64_t wait_us) {
  if (store_->on_own_thread()) {
    throw Error(Code::unsupported,
                "store: a synchronous acquire_wait from an rl callback would wait for itself; use "
                "the async call");
  }
  return wait_for<Outcome>(
      [&](auto done) { acquire_wait_async(std::move(call), wait_us, std::move(done)); });
}

void Limiter::run_async(Call call, Completion done) {
  check_key(call.key);
  check_cost(call.op, call.cost);
  check_timeout(call.timeout_us, "request.timeout_us");
  backend_->run_async(std::move(call), std::move(done));
}

namespace {

// Checks every request of a batch, naming its index, and makes each an acquire.
void check_batch(std::vector<Call>& calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string at = "requests[" + std::to_string(i) + "]";
    Limiter::check_key(calls[i].key, at + ".key");
    Limiter::check_cost(Op::acquire, calls[i].cost, at + ".cost");
    Limiter::check_timeout(calls[i].timeout_us, at + ".timeout_us");
    calls[i].op = Op::acquire;
  }
}

}  // namespace

void Limiter::acquire_batch_async(std::vector<Call> calls, BatchCompletion done) {
  check_batch(calls);
  backend_->run_batch_async(std::move(calls), std::move(done));
}

std::vector<Outcome> Limiter::acquire_batch(std::vector<Call> calls) {
  check_batch(calls);
  return backend_->run_batch(std::move(calls));
}

}  // namespace rl
