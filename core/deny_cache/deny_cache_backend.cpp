#include "deny_cache_backend.h"

namespace rl {

DenyCacheBackend::DenyCacheBackend(std::shared_ptr<Store> store, std::shared_ptr<Backend> inner,
                                   size_t capacity)
    : store_(std::move(store)), inner_(std::move(inner)), denied_(capacity) {}

std::optional<Outcome> DenyCacheBackend::answer_here(Op op, std::string_view key, int64_t cost,
                                                     int64_t now_us) {
  if (op != Op::acquire && op != Op::peek) return std::nullopt;
  std::optional<Verdict> v = denied_.lookup(key, cost, now_us);
  if (!v) return std::nullopt;
  Outcome o;
  o.verdict = *v;
  if (StoreStats* stats = store_->stats()) stats->count(Code::ok, o.verdict);
  return o;
}

void DenyCacheBackend::learn(Op op, std::string_view key, int64_t cost, int64_t asked_at_us,
                             const Outcome& o) {
  if (op == Op::refund || op == Op::reset) {
    denied_.forget(key);  // whatever the outcome: it may have run
    return;
  }
  if (o.code != Code::ok || o.verdict.source != Source::store) return;
  if (!o.verdict.allowed) return denied_.remember(key, cost, asked_at_us, o.verdict);
  if (op == Op::acquire && o.verdict.next_retry_after_us != 0) {
    // It took the last units: the next call of this cost is denied until then.
    Verdict next = o.verdict;
    next.allowed = false;
    next.retry_after_us = o.verdict.next_retry_after_us;
    denied_.remember(key, cost, asked_at_us, next);
  }
}

Outcome DenyCacheBackend::run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
  const int64_t now = store_->clock().now_us();
  if (std::optional<Outcome> here = answer_here(op, key, cost, now)) return std::move(*here);
  Outcome o = inner_->run(op, key, cost, timeout_us);
  learn(op, key, cost, now, o);
  return o;
}

void DenyCacheBackend::run_async(Call call, Completion done) {
  const int64_t now = store_->clock().now_us();
  if (std::optional<Outcome> here = answer_here(call.op, call.key, call.cost, now)) {
    // Completions never run inside the call that started them.
    auto outcome = std::make_shared<Outcome>(std::move(*here));
    if (!store_->post_after(0, [done = std::move(done), outcome](bool shutting_down) mutable {
          done(shutting_down ? Outcome::failure(Code::shutdown, "store: closed")
                             : std::move(*outcome));
        })) {
      throw Error(Code::shutdown, "store: closed");
    }
    return;
  }
  const Op op = call.op;
  const int64_t cost = call.cost;
  std::string key = call.key;
  inner_->run_async(std::move(call), [self = shared_from_this(), op, key = std::move(key), cost,
                                      now, done = std::move(done)](Outcome&& o) {
    self->learn(op, key, cost, now, o);
    done(std::move(o));
  });
}

void DenyCacheBackend::run_batch_async(std::vector<Call> calls, BatchCompletion done) {
  inner_->run_batch_async(std::move(calls), std::move(done));
}

std::vector<Outcome> DenyCacheBackend::run_batch(std::vector<Call> calls) {
  return inner_->run_batch(std::move(calls));
}

}  // namespace rl
