#include "coalescer.h"

#include <algorithm>
#include <deque>

#include "cluster_slots.h"
#include "error.h"
#include "resp.h"
#include "sync_wake.h"

namespace rl::redis {
namespace {

const std::string& batch_function() {
  static const std::string name = std::string(function_library().name) + "_batch";
  return name;
}
const std::string& node_batch_function() {
  static const std::string name = std::string(function_library().name) + "_node_batch";
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
  uint64_t id = 0;
  Batch batch;
  if (!alone_outside_lane) {
    std::lock_guard lock(mutex_);
    Lane& lane = lanes_[key];
    Deadline latest = Deadline::min();
    for (const InFlight& f : lane.in_flight) latest = std::max(latest, f.latest);
    if (lane.in_flight.empty() && lane.waiting.empty()) {
      id = lane.next_id++;
      lane.in_flight.push_back(InFlight{id, 1, deadline});
    } else if (deadline >= latest) {
      lane.waiting.push_back(std::move(w));
      if (lane.sending || !due(key, lane)) return;
      lane.sending = true;
      batch = std::make_shared<std::vector<Waiting>>();
      id = take(lane, *batch);
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
  if (batch) return drain(key, std::move(batch), id);
  // Alone with nothing in flight: no other thread sends this lane's calls
  // yet, and any call that waits meanwhile was made while this one was.
  try {
    send_alone(key, id, w);
  } catch (const Error&) {
    answered(key, id);  // fails what waits behind it: the store is closed
    throw;
  }
}

bool Coalescer::due(LaneKey key, const Lane& lane) const {
  if (lane.waiting.empty() || lane.in_flight.size() >= kMaxInFlight) return false;
  if (lane.in_flight.empty()) return true;
  // A second request: half of the last cycle's calls, so that the cycle's
  // callers split evenly over the two (not one, then all the others).
  size_t cycle = lane.last_answered;
  for (const InFlight& f : lane.in_flight) cycle += f.calls;
  if (lane.waiting.size() < std::max(kMinSecond, (cycle + 1) / 2)) return false;
  // Not while the call in flight may go again (module detection).
  const Connection& node = *key.first;
  return runner_.has_module(node) || !runner_.uses_module(node);
}

uint64_t Coalescer::take(Lane& lane, std::vector<Waiting>& batch) {
  batch.swap(lane.waiting);
  Deadline latest = Deadline::min();
  for (const Waiting& w : batch) latest = std::max(latest, w.deadline);
  const uint64_t id = lane.next_id++;
  lane.in_flight.push_back(InFlight{id, batch.size(), latest});
  return id;
}

void Coalescer::drain(LaneKey key, Batch batch, uint64_t id) {
  for (;;) {
    bool sent = true;
    try {
      if (batch->size() == 1) {
        send_alone(key, id, (*batch)[0]);
      } else {
        send_batch(key, id, batch);
      }
    } catch (const Error& e) {  // the store closed meanwhile: nothing more leaves
      sent = false;
      WakeBatch wakes;
      for (Waiting& w : *batch) (*w.done)(Failure{e.code(), e.what()}, {});
    }
    std::lock_guard lock(mutex_);
    Lane& lane = lanes_[key];
    if (!sent) {
      std::erase_if(lane.in_flight, [id](const InFlight& f) { return f.id == id; });
    }
    if (!due(key, lane)) {
      lane.sending = false;
      return;
    }
    batch = std::make_shared<std::vector<Waiting>>();
    id = take(lane, *batch);
  }
}

void Coalescer::send_alone(LaneKey lane, uint64_t id, Waiting& w) {
  std::vector<ScriptCall> calls;
  calls.push_back(std::move(w.call));
  runner_.run(*lane.first, std::move(calls), w.deadline,
              [this, lane, id, done = w.done](Failure&& f, std::vector<Reply>&& replies) {
                answered(lane, id);
                (*done)(std::move(f), std::move(replies));
              });
}

void Coalescer::answered(LaneKey key, uint64_t id) {
  Batch batch;
  uint64_t next = 0;
  {
    std::lock_guard lock(mutex_);
    Lane& lane = lanes_[key];
    const auto it = std::find_if(lane.in_flight.begin(), lane.in_flight.end(),
                                 [id](const InFlight& f) { return f.id == id; });
    if (it != lane.in_flight.end()) {
      lane.last_answered = it->calls;
      lane.in_flight.erase(it);
    }
    // Whoever sends now sends what became due too, once its send returned.
    if (lane.sending || !due(key, lane)) return;
    lane.sending = true;
    batch = std::make_shared<std::vector<Waiting>>();
    next = take(lane, *batch);
  }
  drain(key, std::move(batch), next);
}

// At most this many calls per FCALL: one FCALL holds Redis for all of its
// calls (some microseconds each), so a long queue leaves as several,
// pipelined in one write, and other clients get a turn between them.
constexpr size_t kMaxPerFcall = 64;

void Coalescer::send_batch(LaneKey lane, uint64_t id, const Batch& calls) {
  const std::vector<Waiting>& batch = *calls;
  Request request;
  request.deadline = Deadline::max();
  request.count = 0;
  auto many_chunks = std::make_shared<std::vector<bool>>();  // which went as RL.MANY
  const bool takes_many = runner_.takes_many(*lane.first);
  for (size_t from = 0; from < batch.size(); from += kMaxPerFcall) {
    const size_t to = std::min(batch.size(), from + kMaxPerFcall);
    const std::string count = std::to_string(to - from);
    std::vector<std::string_view> argv;
    argv.reserve(5 + (to - from) * 5);
    std::deque<std::string> counts;  // the groups' counts: argv views them
    const bool whole_node = lane.second == kWholeNode;
    // RL.MANY (one limiter's calls) or RL.BATCH where the module is known
    // to be (the lane's first call, sent alone, found out).
    if (!whole_node && runner_.has_module(*lane.first)) {
      const ScriptCall& first = batch[from].call;
      const bool many = takes_many && std::all_of(batch.begin() + from + 1, batch.begin() + to,
                                                  [&](const Waiting& w) {
                                                    return ModuleRunner::one_limiter(first, w.call);
                                                  });
      if (many) {
        ModuleRunner::start_many(argv, first);
      } else {
        argv.push_back("RL.BATCH");
      }
      for (size_t i = from; i < to; ++i) {
        if (many) {
          ModuleRunner::append_many(argv, batch[i].call);
        } else {
          ModuleRunner::append_batch(argv, batch[i].call);
        }
        request.deadline = std::min(request.deadline, batch[i].deadline);
      }
      many_chunks->resize(request.count + 1);
      (*many_chunks)[request.count] = many;
      request.commands += format_command(argv);
      ++request.count;
      continue;
    }
    argv.push_back("FCALL");
    if (whole_node) {  // FCALL node_batch 1 key1 n key2... group...: one declared key
      argv.push_back(node_batch_function());
      argv.push_back("1");
      argv.push_back(batch[from].call.keys.at(0));
      argv.push_back(count);
    } else {
      argv.push_back(batch_function());
      argv.push_back(count);
    }
    for (size_t i = from; i < to; ++i) {
      if (!whole_node || i != from) argv.push_back(batch[i].call.keys.at(0));
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
  request.done = [this, lane, id, calls, wait_ms, many_chunks](Failure&& f,
                                                               std::vector<Reply>&& replies) {
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
      answered(lane, id);
      for (Waiting& w : *calls) (*w.done)(Failure{f.code, f.message}, {});
      return;
    }
    // What waited leaves before this batch's callers are woken, so that
    // Redis decides it while they wake (many sync callers on few cores keep
    // this thread off the CPU meanwhile) instead of idling until they did.
    // Calls whose FCALL did not run at all go again, one by one, after the
    // others were told; the request stays in flight until then.
    const bool all_ran = std::none_of(replies.begin(), replies.end(),
                                      [](const Reply& r) { return function_not_run(r); });
    if (all_ran) answered(lane, id);
    std::vector<Waiting> again;
    for (size_t c = 0; c < replies.size(); ++c) {
      Reply& reply = replies[c];
      const size_t from = c * kMaxPerFcall;
      const size_t to = std::min(calls->size(), from + kMaxPerFcall);
      if (function_not_run(reply)) {  // the batch function did not run at all
        // An RL.MANY refused: the node's later batches go as RL.BATCH.
        if (c < many_chunks->size() && (*many_chunks)[c]) runner_.refused_many(*lane.first);
        for (size_t i = from; i < to; ++i) again.push_back((*calls)[i]);
        continue;
      }
      const bool per_call = reply.type == Reply::Type::array && reply.elements.size() == to - from;
      if (!per_call && !reply.is_error()) {
        reply.type = Reply::Type::error;
        reply.text = "ERR unexpected reply to a batch of " + std::to_string(to - from);
      }
      // A node batch redirected (MOVED, ASK) for its declared key, its
      // first call's: that answer is the first call's alone; the others did
      // not run and go again alone (an ASK for one key says nothing of the
      // others, which may still be here).
      const bool redirected_for_first =
          lane.second == kWholeNode && !per_call && parse_redirect(reply.text).has_value();
      for (size_t i = from; i < to; ++i) {
        std::vector<Reply> one(1);
        one[0] = per_call ? std::move(reply.elements[i - from]) : reply;  // a command's error: each
        if (redirected_for_first && i != from) one[0].text = std::string(kNotRunInBatch);
        (*(*calls)[i].done)(Failure{}, std::move(one));
      }
    }
    if (again.empty()) return;
    try {
      send_each(lane, id, again);
    } catch (const Error& e) {
      answered(lane, id);
      for (Waiting& w : again) (*w.done)(Failure{e.code(), e.what()}, {});
    }
  };
  lane.first->send(std::move(request));
}

void Coalescer::send_each(LaneKey lane, uint64_t id, std::vector<Waiting>& batch) {
  std::vector<ScriptCall> calls;
  auto dones = std::make_shared<std::vector<std::shared_ptr<ReplyHandler>>>();
  Deadline deadline = Deadline::max();
  for (Waiting& w : batch) {
    calls.push_back(w.call);
    dones->push_back(w.done);
    deadline = std::min(deadline, w.deadline);
  }
  // One pipelined write; the request stays in flight until its replies.
  runner_.run(*lane.first, std::move(calls), deadline,
              [this, lane, id, dones](Failure&& f, std::vector<Reply>&& replies) {
                WakeBatch wakes;
                answered(lane, id);
                if (f) return fail(*dones, f.code, f.message);
                for (size_t i = 0; i < dones->size(); ++i) {
                  std::vector<Reply> one(1);
                  one[0] = std::move(replies[i]);
                  (*(*dones)[i])(Failure{}, std::move(one));
                }
              });
}

}  // namespace rl::redis
