#include "failover_backend.h"

#include <chrono>

#include "outage.h"

namespace rl {
namespace {

using Permit = CircuitBreaker::Permit;

class FailoverBackend final : public Backend, public std::enable_shared_from_this<FailoverBackend> {
 public:
  FailoverBackend(std::shared_ptr<FailoverStore> store, std::shared_ptr<Backend> inner,
                  const Policy& policy)
      : store_(std::move(store)),
        inner_(std::move(inner)),
        failure_(policy.failure),
        first_limit_(policy.rates.front().limit) {
    if (failure_.on_failure == OnFailure::local) {
      local_ = store_->local().backend_for(local_policy(policy));
    }
  }

  Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) override {
    return counted(decide(op, key, cost, timeout_us));
  }

  void run_async(Call call, Completion done) override {
    const Permit permit = store_->breaker().admit();
    if (permit == Permit::reject) {
      // Never inside the call: the fallback runs on the local store's thread.
      auto task = [self = shared_from_this(), call = std::move(call), done]() {
        done(self->counted(self->fallback(call.op, call.key, call.cost, self->refused())));
      };
      post(std::move(task), done);
      return;
    }
    // The key is kept only when the local fallback may need it.
    Call kept = local_ ? call : Call{call.op, {}, call.cost};
    auto completion = [self = shared_from_this(), permit, kept = std::move(kept),
                       started = Steady::now(), done](Outcome&& o) {
      self->timed(started);
      if (!self->settle(permit, o.code, o.message)) return done(self->counted(std::move(o)));
      done(self->counted(self->fallback(kept.op, kept.key, kept.cost, std::move(o))));
    };
    inner_->run_async(std::move(call), std::move(completion));
  }

  std::vector<Outcome> run_batch(std::vector<Call> calls) override {
    const Permit permit = store_->breaker().admit();
    if (permit == Permit::reject) {
      if (failure_.on_failure == OnFailure::closed) {
        const Outcome o = refused();
        throw Error(o.code, o.message);
      }
      return counted_all(fallback_all(calls, refused()));
    }
    std::vector<Call> kept = calls;  // what the fallbacks decide, if any
    std::vector<Outcome> outcomes;
    const auto started = Steady::now();
    try {
      outcomes = inner_->run_batch(std::move(calls));
    } catch (const Error& e) {
      timed(started);
      // A batch that failed as a whole stays so under on_failure=closed.
      if (!settle(permit, e.code(), e.what()) || failure_.on_failure == OnFailure::closed) throw;
      return counted_all(fallback_all(kept, Outcome::failure(e.code(), e.what())));
    }
    timed(started);
    settle_batch(permit, outcomes, kept);
    return counted_all(std::move(outcomes));
  }

  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override {
    const Permit permit = store_->breaker().admit();
    if (permit == Permit::reject) {
      auto task = [self = shared_from_this(), calls = std::move(calls), done]() {
        if (self->failure_.on_failure == OnFailure::closed) return done(self->refused(), {});
        done(Outcome{}, self->counted_all(self->fallback_all(calls, self->refused())));
      };
      post(std::move(task), [done](Outcome&& o) { done(std::move(o), {}); });
      return;
    }
    std::vector<Call> kept = calls;  // sizes (and keys, for local) of the fallbacks
    auto completion = [self = shared_from_this(), permit, kept = std::move(kept),
                       started = Steady::now(),
                       done](Outcome&& failure, std::vector<Outcome>&& outcomes) {
      self->timed(started);
      if (failure.code != Code::ok) {
        if (!self->settle(permit, failure.code, failure.message) ||
            self->failure_.on_failure == OnFailure::closed) {
          self->counted(Outcome(failure));
          return done(std::move(failure), {});
        }
        return done(Outcome{}, self->counted_all(self->fallback_all(kept, std::move(failure))));
      }
      self->settle_batch(permit, outcomes, kept);
      done(Outcome{}, self->counted_all(std::move(outcomes)));
    };
    inner_->run_batch_async(std::move(calls), std::move(completion));
  }

 private:
  using Steady = std::chrono::steady_clock;

  // One sync call: through the breaker to the store, or to the fallback.
  Outcome decide(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
    const Permit permit = store_->breaker().admit();
    if (permit == Permit::reject) return fallback(op, key, cost, refused());
    const auto started = Steady::now();
    Outcome o = inner_->run(op, key, cost, timeout_us);
    timed(started);
    if (!settle(permit, o.code, o.message)) return o;
    return fallback(op, key, cost, std::move(o));
  }

  // Statistics: the round trip of every call that went to the store, and
  // every outcome as the caller gets it.
  void timed(Steady::time_point started) {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - started);
    store_->stats()->round_trips.record(elapsed.count());
  }
  Outcome counted(Outcome&& o) {
    store_->stats()->count(o.code, o.verdict);
    return std::move(o);
  }
  std::vector<Outcome> counted_all(std::vector<Outcome>&& outcomes) {
    for (const Outcome& o : outcomes) store_->stats()->count(o.code, o.verdict);
    return std::move(outcomes);
  }

  // Tells the breaker how a call admitted with `permit` ended; true when it
  // was an outage (and so the failure policy decides).
  bool settle(Permit permit, Code code, const std::string& message) {
    if (!is_outage(code)) {
      store_->breaker().on_answer(permit);
      return false;
    }
    store_->remember_outage(message);
    store_->breaker().on_outage(permit);
    return true;
  }

  // A batch that reached the store: per-request outages (if any) each take
  // the failure policy; the breaker hears once, from the first request.
  void settle_batch(Permit permit, std::vector<Outcome>& outcomes, const std::vector<Call>& kept) {
    bool outage = false;
    for (const Outcome& o : outcomes) outage = outage || is_outage(o.code);
    if (!outage) return store_->breaker().on_answer(permit);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (!is_outage(outcomes[i].code)) continue;
      store_->remember_outage(outcomes[i].message);
      const Call& c = kept[i];
      outcomes[i] = fallback(c.op, c.key, c.cost, std::move(outcomes[i]));
    }
    store_->breaker().on_outage(permit);
  }

  // What an outage gives under this limiter's on_failure.
  Outcome fallback(Op op, std::string_view key, int64_t cost, Outcome&& failure) {
    switch (failure_.on_failure) {
      case OnFailure::closed: return std::move(failure);
      case OnFailure::open: {
        Outcome o;
        o.verdict.allowed = true;
        o.verdict.limit = first_limit_;
        o.verdict.source = Source::fail_open;
        return o;
      }
      case OnFailure::local: {
        Outcome o = local_->run(op, key, cost, 0);
        o.verdict.source = Source::local;
        return o;
      }
    }
    return std::move(failure);
  }

  std::vector<Outcome> fallback_all(const std::vector<Call>& calls, const Outcome& failure) {
    std::vector<Outcome> outcomes;
    outcomes.reserve(calls.size());
    for (const Call& c : calls) outcomes.push_back(fallback(c.op, c.key, c.cost, Outcome(failure)));
    return outcomes;
  }

  Outcome refused() {
    return Outcome::failure(Code::backend_unavailable,
                            "store: circuit open after repeated outages, calls fail at once "
                            "until a probe succeeds; last outage: " +
                                store_->last_outage());
  }

  // Runs `task` on the local store's thread; once that store is closed, the
  // call completes with the shutdown status instead, still off the caller.
  template <class Task, class Done>
  void post(Task task, Done done) {
    const bool posted =
        store_->local().executor().post([task = std::move(task), done](bool shutting_down) {
          if (shutting_down) return done(Outcome::failure(Code::shutdown, "store: closed"));
          task();
        });
    if (!posted) throw Error(Code::shutdown, "store: closed");
  }

  std::shared_ptr<FailoverStore> store_;
  std::shared_ptr<Backend> inner_;
  std::shared_ptr<Backend> local_;  // on_failure=local only
  const FailurePolicy failure_;
  const int64_t first_limit_;
};

}  // namespace

std::shared_ptr<Backend> failover_backend(std::shared_ptr<FailoverStore> store,
                                          std::shared_ptr<Backend> inner, const Policy& policy) {
  return std::make_shared<FailoverBackend>(std::move(store), std::move(inner), policy);
}

}  // namespace rl
