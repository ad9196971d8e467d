#include "coalescer.h"

#include <algorithm>
#include <deque>

#include "error.h"
#include "resp.h"
#include "sync_wake.h"

namespace rl::redis {
namespace {

const std::string& batch_function() {
  static const std::string name = std::string(function_library().name) + "_batch";
  return name;
}

void fail(std::vector<std::shared_ptr<ReplyHandler>>& dones, Code code, const std::string& why) {
  for (auto& done : dones) (*done)(Failure{code, why}, {});
}

}  // namespace

void Coalescer::run(Connection& node, uint32_t slot, ScriptCall call, Deadline deadline,
                    ReplyHandler done) {
  const LaneKey key{&node, slot};
  Waiting w{std::move(call), deadline, std::make_shared<ReplyHandler>(std::move(done))};
  bool alone_outside_lane = !runner_.coalesces(node);
  if (!alone_outside_lane) {
    std::lock_guard lock(mutex_);
    Lane& lane = lanes_[key];
    if (!lane.busy) {
      lane.busy = true;
      lane.in_flight_deadline = deadline;
    } else if (deadline >= lane.in_flight_deadline) {
      lane.waiting.push_back(std::move(w));
      return;
    } else {
      alone_outside_lane = true;  // in a hurry: it does not wait
    }
  }
  if (alone_outside_lane) {
    std::vector<ScriptCall> calls;
    calls.push_back(std::move(w.call));
    return runner_.run(node, std::move(calls), deadline,
                       [done = w.done](Failure&& f, std::vector<Reply>&& r) {
                         (*done)(std::move(f), std::move(r));
                       });
  }
  try {
    send_alone(key, w);
  } catch (const Error&) {
    next(key);  // fails what waits behind it: the store is closed
    throw;
  }
}

void Coalescer::send_alone(LaneKey lane, Waiting& w) {
  std::vector<ScriptCall> calls;
  calls.push_back(std::move(w.call));
  runner_.run(*lane.first, std::move(calls), w.deadline,
              [this, lane, done = w.done](Failure&& f, std::vector<Reply>&& replies) {
                next(lane);
                (*done)(std::move(f), std::move(replies));
              });
}

void Coalescer::next(LaneKey key) {
  auto batch = std::make_shared<std::vector<Waiting>>();
  {
    std::lock_guard lock(mutex_);
    Lane& lane = lanes_[key];
    if (lane.waiting.empty()) {
      lane.busy = false;
      return;
    }
    batch->swap(lane.waiting);
    lane.in_flight_deadline = Deadline::min();
    for (const Waiting& w : *batch)
      lane.in_flight_deadline = std::max(lane.in_flight_deadline, w.deadline);
  }
  try {
    if (batch->size() == 1) return send_alone(key, (*batch)[0]);
    send_batch(key, batch);
  } catch (const Error& e) {  // the store closed meanwhile: nothing more leaves
    WakeBatch wakes;
    for (Waiting& w : *batch) (*w.done)(Failure{e.code(), e.what()}, {});
    next(key);
  }
}

// At most this many calls per FCALL: one FCALL holds Redis for all of its
// calls (some microseconds each), so a long queue leaves as several,
// pipelined in one write, and other clients get a turn between them.
constexpr size_t kMaxPerFcall = 64;

void Coalescer::send_batch(LaneKey lane, const std::shared_ptr<std::vector<Waiting>>& calls) {
  const std::vector<Waiting>& batch = *calls;
  Request request;
  request.deadline = Deadline::max();
  request.count = 0;
  for (size_t from = 0; from < batch.size(); from += kMaxPerFcall) {
    const size_t to = std::min(batch.size(), from + kMaxPerFcall);
    const std::string count = std::to_string(to - from);
    std::vector<std::string_view> argv;
    argv.reserve(3 + (to - from) * 5);
    std::deque<std::string> counts;  // the groups' counts: argv views them
    // RL.BATCH key name now cost limits ... where the module is known to be
    // (the lane's first call, sent alone, found out).
    if (runner_.has_module(*lane.first)) {
      argv.push_back("RL.BATCH");
      for (size_t i = from; i < to; ++i) {
        ModuleRunner::append_batch(argv, batch[i].call);
        request.deadline = std::min(request.deadline, batch[i].deadline);
      }
      request.commands += format_command(argv);
      ++request.count;
      continue;
    }
    argv.push_back("FCALL");
    argv.push_back(batch_function());
    argv.push_back(count);
    for (size_t i = from; i < to; ++i) {
      argv.push_back(batch[i].call.keys.at(0));
      request.deadline = std::min(request.deadline, batch[i].deadline);
    }
    // lua/library.lua's groups: name, limits, n for n usual calls in a row
    // of one limiter (one function, the same limits); name_full, now,
    // cost, limits for any other call.
    for (size_t i = from; i < to;) {
      const ScriptCall& call = batch[i].call;
      if (!usual_call(call)) {
        argv.push_back(full_call_name(call.algorithm, call.op));
        for (const std::string& a : call.args) argv.push_back(a);
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < to && usual_call(batch[end].call) &&
             batch[end].call.algorithm == call.algorithm && batch[end].call.op == call.op &&
             batch[end].call.args[2] == call.args[2])
        ++end;
      argv.push_back(call_name(call.algorithm, call.op));
      argv.push_back(call.args[2]);
      argv.push_back(counts.emplace_back(std::to_string(end - i)));
      i = end;
    }
    request.commands += format_command(argv);
    ++request.count;
  }
  // min_replicas: one WAIT after every FCALL of the batch covers them all.
  const ReplicaWait& replica_wait = runner_.replica_wait();
  const bool writes =
      std::any_of(batch.begin(), batch.end(), [](const Waiting& w) { return w.call.writes; });
  const int64_t wait_ms = replica_wait.on() && writes ? append_wait(request, replica_wait) : 0;
  request.done = [this, lane, calls, wait_ms](Failure&& f, std::vector<Reply>&& replies) {
    // This thread wakes the batch's first sync caller only; they wake one
    // another (core/sync_wake.h), once every call was told.
    WakeBatch wakes;
    if (!f && wait_ms > 0) {
      Reply wait = std::move(replies.back());
      replies.pop_back();
      // Only an FCALL that ran wrote (one the server refused did not).
      const bool ran =
          std::any_of(replies.begin(), replies.end(), [](const Reply& r) { return !r.is_error(); });
      if (ran) f = wait_failure(wait, runner_.replica_wait(), wait_ms, lane.first->name());
    }
    if (f) {
      next(lane);
      for (Waiting& w : *calls) (*w.done)(Failure{f.code, f.message}, {});
      return;
    }
    // What waited leaves before this batch's callers are woken, so that
    // Redis decides it while they wake (many sync callers on few cores keep
    // this thread off the CPU meanwhile) instead of idling until they did.
    // Calls whose FCALL did not run at all go again, one by one, after the
    // others were told; the lane stays busy until then.
    const bool all_ran = std::none_of(replies.begin(), replies.end(),
                                      [](const Reply& r) { return function_not_run(r); });
    if (all_ran) next(lane);
    std::vector<Waiting> again;
    for (size_t c = 0; c < replies.size(); ++c) {
      Reply& reply = replies[c];
      const size_t from = c * kMaxPerFcall;
      const size_t to = std::min(calls->size(), from + kMaxPerFcall);
      if (function_not_run(reply)) {  // the batch function did not run at all
        for (size_t i = from; i < to; ++i) again.push_back((*calls)[i]);
        continue;
      }
      const bool per_call = reply.type == Reply::Type::array && reply.elements.size() == to - from;
      if (!per_call && !reply.is_error()) {
        reply.type = Reply::Type::error;
        reply.text = "ERR unexpected reply to a batch of " + std::to_string(to - from);
      }
      for (size_t i = from; i < to; ++i) {
        std::vector<Reply> one(1);
        one[0] = per_call ? std::move(reply.elements[i - from]) : reply;  // a command's error: each
        (*(*calls)[i].done)(Failure{}, std::move(one));
      }
    }
    if (again.empty()) return;
    try {
      send_each(lane, again);
    } catch (const Error& e) {
      next(lane);
      for (Waiting& w : again) (*w.done)(Failure{e.code(), e.what()}, {});
    }
  };
  lane.first->send(std::move(request));
}

void Coalescer::send_each(LaneKey lane, std::vector<Waiting>& batch) {
  std::vector<ScriptCall> calls;
  auto dones = std::make_shared<std::vector<std::shared_ptr<ReplyHandler>>>();
  Deadline deadline = Deadline::max();
  for (Waiting& w : batch) {
    calls.push_back(w.call);
    dones->push_back(w.done);
    deadline = std::min(deadline, w.deadline);
  }
  // One pipelined write; the lane stays busy until its replies.
  runner_.run(*lane.first, std::move(calls), deadline,
              [this, lane, dones](Failure&& f, std::vector<Reply>&& replies) {
                WakeBatch wakes;
                next(lane);
                if (f) return fail(*dones, f.code, f.message);
                for (size_t i = 0; i < dones->size(); ++i) {
                  std::vector<Reply> one(1);
                  one[0] = std::move(replies[i]);
                  (*(*dones)[i])(Failure{}, std::move(one));
                }
              });
}

}  // namespace rl::redis
