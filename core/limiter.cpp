#include "limiter.h"

#include <thread>

namespace rl {

Limiter::Limiter(std::shared_ptr<Store> store, const Settings& settings)
    : store_(std::move(store)),
      policy_(Policy::from(settings)),
      backend_(store_->backend_for(policy_)) {}

void Limiter::check_key(std::string_view key, std::string_view what) {
  if (key.empty()) fail_invalid(std::string(what) + ": is empty");
  if (key.size() > kMaxKeyLength) {
    fail_invalid(std::string(what) + ": " + std::to_string(key.size()) +
                 " bytes is longer than the maximum of 512");
  }
}

void Limiter::check_cost(Op op, int64_t cost, std::string_view what) {
  if (op == Op::reset) return;
  const int64_t min = op == Op::peek ? 0 : 1;
  if (cost < min) {
    fail_invalid(std::string(what) + ": " + std::to_string(cost) +
                 (cost < 0 ? " is negative" : " means nothing") + "; it must be at least " +
                 std::to_string(min));
  }
  if (cost > kMaxLimit) {
    fail_invalid(std::string(what) + ": " + std::to_string(cost) +
                 " is larger than the maximum 2^40");
  }
}

Outcome Limiter::run(Op op, std::string_view key, int64_t cost) {
  check_key(key);
  check_cost(op, cost);
  return backend_->run(op, key, cost);
}

Outcome Limiter::acquire_wait(std::string_view key, int64_t cost, int64_t timeout_us) {
  if (timeout_us < 0) fail_invalid("timeout: " + std::to_string(timeout_us) + " is negative");
  check_key(key);
  check_cost(Op::acquire, cost);
  const int64_t deadline = store_->clock().now_us() + std::min(timeout_us, kMaxTime);
  while (true) {
    Outcome o = backend_->run(Op::acquire, key, cost);
    if (o.code != Code::ok || o.verdict.allowed || o.verdict.retry_after_us < 0) return o;
    const int64_t now = store_->clock().now_us();
    // A manual clock never moves by itself: waiting on it would never end.
    if (store_->clock().is_manual() || now + o.verdict.retry_after_us > deadline) return o;
    std::this_thread::sleep_for(std::chrono::microseconds(o.verdict.retry_after_us));
  }
}

void Limiter::run_async(Call call, Completion done) {
  check_key(call.key);
  check_cost(call.op, call.cost);
  backend_->run_async(std::move(call), std::move(done));
}

namespace {

// Checks every request of a batch, naming its index, and makes each an acquire.
void check_batch(std::vector<Call>& calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string at = "requests[" + std::to_string(i) + "]";
    Limiter::check_key(calls[i].key, at + ".key");
    Limiter::check_cost(Op::acquire, calls[i].cost, at + ".cost");
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
