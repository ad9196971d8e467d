#include "failover_backend.h"

#include <chrono>

#include "outage.h"

namespace rl {
namespace {

using Permit = CircuitBreaker::Permit;
using Node = NodeBreakers::Node;

// A batch over the nodes its calls go to: each node's breaker decides once
// for all of that node's calls (one of them a probe: the node's part is).
// The calls it lets through leave together as one batch of the inner store.
struct BatchPlan {
  struct Part {
    NodeId id;
    Node* node;
    Permit permit;
  };
  std::vector<Call> calls;      // every call, kept for the fallbacks
  std::vector<size_t> part_of;  // each call's part
  std::vector<Part> parts;
  std::vector<Call> sent;  // the calls whose node's breaker let them go, in order

  bool all_refused() const { return !calls.empty() && sent.empty(); }
};

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
    Node& node = node_for(call.key);
    const Permit permit = node.breaker.admit();
    if (permit == Permit::reject) {
      // Never inside the call: the fallback runs on the local store's thread.
      auto task = [self = shared_from_this(), call = std::move(call), &node, done]() {
        done(self->counted(self->fallback(call.op, call.key, call.cost, refused(node))));
      };
      post(std::move(task), done);
      return;
    }
    // The key is kept only when the local fallback may need it.
    Call kept = local_ ? call : Call{call.op, {}, call.cost};
    auto completion = [self = shared_from_this(), &node, permit, kept = std::move(kept),
                       started = Steady::now(), done](Outcome&& o) {
      self->timed(started);
      if (!settle(node, permit, o.code, o.message)) return done(self->counted(std::move(o)));
      done(self->counted(self->fallback(kept.op, kept.key, kept.cost, std::move(o))));
    };
    inner_->run_async(std::move(call), std::move(completion));
  }

  std::vector<Outcome> run_batch(std::vector<Call> calls) override {
    BatchPlan plan = plan_batch(std::move(calls));
    if (plan.all_refused()) {
      if (failure_.on_failure == OnFailure::closed) {
        const Outcome o = refused(*plan.parts.front().node);
        throw Error(o.code, o.message);
      }
      return counted_all(finish(plan, {}));
    }
    std::vector<Outcome> outcomes;
    const auto started = Steady::now();
    try {
      outcomes = inner_->run_batch(std::move(plan.sent));
    } catch (const Error& e) {
      timed(started);
      // A batch that failed as a whole stays so under on_failure=closed.
      if (!settle_whole(plan, e.code(), e.what()) || failure_.on_failure == OnFailure::closed)
        throw;
      return counted_all(fallback_all(plan.calls, Outcome::failure(e.code(), e.what())));
    }
    timed(started);
    return counted_all(finish(plan, std::move(outcomes)));
  }

  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override {
    auto plan = std::make_shared<BatchPlan>(plan_batch(std::move(calls)));
    if (plan->all_refused()) {
      auto task = [self = shared_from_this(), plan, done]() {
        if (self->failure_.on_failure == OnFailure::closed)
          return done(refused(*plan->parts.front().node), {});
        done(Outcome{}, self->counted_all(self->finish(*plan, {})));
      };
      post(std::move(task), [done](Outcome&& o) { done(std::move(o), {}); });
      return;
    }
    auto completion = [self = shared_from_this(), plan, started = Steady::now(), done](
                          Outcome&& failure, std::vector<Outcome>&& outcomes) {
      self->timed(started);
      if (failure.code != Code::ok) {
        if (!settle_whole(*plan, failure.code, failure.message) ||
            self->failure_.on_failure == OnFailure::closed) {
          self->counted(Outcome(failure));
          return done(std::move(failure), {});
        }
        return done(Outcome{},
                    self->counted_all(self->fallback_all(plan->calls, std::move(failure))));
      }
      done(Outcome{}, self->counted_all(self->finish(*plan, std::move(outcomes))));
    };
    inner_->run_batch_async(std::move(plan->sent), std::move(completion));
  }

 private:
  using Steady = std::chrono::steady_clock;

  // The breaker of the node a call for `key` goes to.
  Node& node_for(std::string_view key) { return store_->breakers().of(inner_->node_of(key)); }

  // One sync call: through its node's breaker to the store, or to the fallback.
  Outcome decide(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
    Node& node = node_for(key);
    const Permit permit = node.breaker.admit();
    if (permit == Permit::reject) return fallback(op, key, cost, refused(node));
    const auto started = Steady::now();
    Outcome o = inner_->run(op, key, cost, timeout_us);
    timed(started);
    if (!settle(node, permit, o.code, o.message)) return o;
    return fallback(op, key, cost, std::move(o));
  }

  // Groups a batch's calls by node and asks each node's breaker once.
  BatchPlan plan_batch(std::vector<Call> calls) {
    BatchPlan plan;
    plan.part_of.reserve(calls.size());
    for (const Call& c : calls) {
      const NodeId id = inner_->node_of(c.key);
      size_t part = 0;
      while (part < plan.parts.size() && plan.parts[part].id != id) ++part;
      if (part == plan.parts.size()) {
        Node& node = store_->breakers().of(id);
        plan.parts.push_back({id, &node, node.breaker.admit()});
      }
      plan.part_of.push_back(part);
      if (plan.parts[part].permit != Permit::reject) plan.sent.push_back(c);
    }
    plan.calls = std::move(calls);
    return plan;
  }

  // The batch's outcomes from what the inner store answered for the calls
  // it was sent: each node's breaker hears once, from its own calls;
  // outages and refused calls take the failure policy.
  std::vector<Outcome> finish(const BatchPlan& plan, std::vector<Outcome>&& answered) {
    std::vector<Outcome> outcomes(plan.calls.size());
    std::vector<bool> outage(plan.parts.size(), false);
    size_t next = 0;
    for (size_t i = 0; i < plan.calls.size(); ++i) {
      const BatchPlan::Part& part = plan.parts[plan.part_of[i]];
      const Call& c = plan.calls[i];
      if (part.permit == Permit::reject) {
        outcomes[i] = fallback(c.op, c.key, c.cost, refused(*part.node));
        continue;
      }
      Outcome& o = answered.at(next++);
      if (!is_outage(o.code)) {
        outcomes[i] = std::move(o);
        continue;
      }
      outage[plan.part_of[i]] = true;
      part.node->remember_outage(o.message);
      outcomes[i] = fallback(c.op, c.key, c.cost, std::move(o));
    }
    for (size_t k = 0; k < plan.parts.size(); ++k) {
      const BatchPlan::Part& part = plan.parts[k];
      if (part.permit == Permit::reject) continue;
      if (outage[k]) {
        part.node->breaker.on_outage(part.permit);
      } else {
        part.node->breaker.on_answer(part.permit);
      }
    }
    return outcomes;
  }

  // The calls the breakers let go failed as one: every node they went to
  // hears it. True when it was an outage.
  static bool settle_whole(const BatchPlan& plan, Code code, const std::string& message) {
    bool outage = false;
    for (const BatchPlan::Part& part : plan.parts) {
      if (part.permit == Permit::reject) continue;
      const bool this_outage = settle(*part.node, part.permit, code, message);
      outage = outage || this_outage;
    }
    return outage;
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

  // Tells a node's breaker how a call admitted with `permit` ended; true
  // when it was an outage (and so the failure policy decides).
  static bool settle(Node& node, Permit permit, Code code, const std::string& message) {
    if (!is_outage(code)) {
      node.breaker.on_answer(permit);
      return false;
    }
    node.remember_outage(message);
    node.breaker.on_outage(permit);
    return true;
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

  // What a call gets from a node whose breaker is open (the last outage
  // names the node).
  static Outcome refused(Node& node) {
    return Outcome::failure(Code::backend_unavailable,
                            "store: circuit open after repeated outages of the node, calls to it "
                            "fail at once until a probe succeeds; last outage: " +
                                node.last_outage());
  }

  // Runs `task` on a thread of the store; once the store is closing, the
  // call completes with the shutdown status instead, still off the caller.
  template <class Task, class Done>
  void post(Task task, Done done) {
    const bool posted = store_->post_after(0, [task = std::move(task), done](bool shutting_down) {
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
