#include "deny_cache_backend.h"

#include <algorithm>

namespace rl {

DenyCacheBackend::DenyCacheBackend(std::shared_ptr<Store> store, std::shared_ptr<Backend> inner,
                                   size_t capacity)
    : store_(std::move(store)), inner_(std::move(inner)), denied_(capacity) {}

namespace {

bool cacheable(Op op) {
  return op == Op::acquire || op == Op::peek;
}

// A call's deadline on the steady clock (0: the store's timeout), and the
// timeout left of it for a store call made now.
int64_t deadline_of(int64_t timeout_us) {
  return timeout_us > 0 ? DeniedKeys::steady_us() + timeout_us : 0;
}
int64_t timeout_left(int64_t deadline_us) {
  if (deadline_us == 0) return 0;
  return std::max<int64_t>(1, deadline_us - DeniedKeys::steady_us());
}

}  // namespace

Outcome DenyCacheBackend::answered_here(const Verdict& v) {
  Outcome o;
  o.verdict = v;
  if (StoreStats* stats = store_->stats()) stats->count(Code::ok, o.verdict);
  return o;
}

void DenyCacheBackend::learn(Op op, std::string_view key, int64_t cost, int64_t asked_at_us,
                             const Outcome& o) {
  if (op == Op::refund || op == Op::reset || op == Op::release) {
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
  const int64_t deadline = deadline_of(timeout_us);
  while (true) {
    const int64_t now = store_->clock().now_us();
    DeniedKeys::Look look;
    if (cacheable(op)) look = denied_.lookup(key, cost, now, deadline);
    switch (look.found) {
      case DeniedKeys::Found::denied: return answered_here(look.verdict);
      case DeniedKeys::Found::probing:
        // The store's own thread must not wait for a reply it would read.
        if (store_->on_own_thread()) break;
        denied_.wait_probe_end(key, look.probe_id);
        continue;  // its answer may be ours: look again
      case DeniedKeys::Found::probe:
      case DeniedKeys::Found::unknown: break;
    }
    // The probe ends however the call ends, a throw included.
    struct EndProbe {
      DeniedKeys& keys;
      std::string_view key;
      uint64_t id;
      ~EndProbe() {
        if (id != 0) keys.end_probe(key, id);
      }
    } end_probe{denied_, key, look.found == DeniedKeys::Found::probe ? look.probe_id : 0};
    Outcome o = inner_->run(op, key, cost, timeout_left(deadline));
    learn(op, key, cost, now, o);
    return o;
  }
}

void DenyCacheBackend::run_async(Call call, Completion done) {
  const int64_t now = store_->clock().now_us();
  const int64_t deadline = deadline_of(call.timeout_us);
  DeniedKeys::Look look;
  if (cacheable(call.op)) look = denied_.lookup(call.key, call.cost, now, deadline);
  if (look.found == DeniedKeys::Found::denied) {
    // Completions never run inside the call that started them.
    auto outcome = std::make_shared<Outcome>(answered_here(look.verdict));
    if (!store_->post_after(0, [done = std::move(done), outcome](bool shutting_down) mutable {
          done(shutting_down ? Outcome::failure(Code::shutdown, "store: closed")
                             : std::move(*outcome));
        })) {
      throw Error(Code::shutdown, "store: closed");
    }
    return;
  }
  if (look.found == DeniedKeys::Found::probing) {
    // Look again once the probe in flight has its answer, with the time
    // left of this call's deadline (the probe ends by it).
    auto waiting = std::make_shared<std::pair<Call, Completion>>(std::move(call), std::move(done));
    std::function<void()> wake = [self = shared_from_this(), waiting, deadline] {
      Call again = std::move(waiting->first);
      again.timeout_us = timeout_left(deadline);
      try {
        self->run_async(std::move(again), std::move(waiting->second));
      } catch (const Error& e) {
        waiting->second(Outcome::failure(e.code(), e.what()));
      }
    };
    if (denied_.on_probe_end(waiting->first.key, look.probe_id, wake)) return;
    return run_async(std::move(waiting->first), std::move(waiting->second));  // it just ended
  }
  const Op op = call.op;
  const int64_t cost = call.cost;
  const uint64_t probe = look.found == DeniedKeys::Found::probe ? look.probe_id : 0;
  std::string key = call.key;
  call.timeout_us = timeout_left(deadline);
  try {
    inner_->run_async(std::move(call), [self = shared_from_this(), op, key, cost, now, probe,
                                        done = std::move(done)](Outcome&& o) {
      self->learn(op, key, cost, now, o);
      if (probe != 0) self->denied_.end_probe(key, probe);
      done(std::move(o));
    });
  } catch (...) {
    if (probe != 0) denied_.end_probe(key, probe);
    throw;
  }
}

void DenyCacheBackend::run_batch_async(std::vector<Call> calls, BatchCompletion done) {
  inner_->run_batch_async(std::move(calls), std::move(done));
}

std::vector<Outcome> DenyCacheBackend::run_batch(std::vector<Call> calls) {
  return inner_->run_batch(std::move(calls));
}

}  // namespace rl
