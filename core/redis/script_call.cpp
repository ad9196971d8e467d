#include "script_call.h"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <memory>
#include <optional>

#include "error.h"
#include "error_reply.h"
#include "resp.h"

namespace rl::redis {
namespace {

// How one call is sent; a call that finds its code missing moves on to the
// next way, so at most four rounds: fcall, load_then_fcall, evalsha, eval.
enum class Way { fcall, load_then_fcall, evalsha, eval };

// Calls `put` with each argument of `call` sent `way`, in order.
template <typename Put>
void for_each_argument(const ScriptCall& call, Way way, std::string_view key_count, Put&& put) {
  switch (way) {
    case Way::fcall:
    case Way::load_then_fcall:
      put("FCALL");
      put(function_name(call.algorithm, call.op));
      break;
    case Way::evalsha:
      put("EVALSHA");
      put(script_for(call.algorithm, call.op).sha1);
      break;
    case Way::eval:
      put("EVAL");
      put(script_for(call.algorithm, call.op).body);
      break;
  }
  put(key_count);
  for (const std::string& k : call.keys) put(k);
  const auto& a = call.args;
  for (size_t i = usual_call(call) ? 2 : 0; i < a.size(); ++i) put(a[i]);
}

// Appends `call` to `out` in RESP after one reserve: a call is on every
// decision's path, and a batch appends many calls to one buffer.
void append_call(std::string& out, const ScriptCall& call, Way way) {
  const std::string key_count = std::to_string(call.keys.size());
  size_t argc = 0;
  size_t bytes = 0;
  for_each_argument(call, way, key_count, [&](std::string_view a) {
    ++argc;
    bytes += resp_argument_size(a.size());
  });
  // Grown at least twofold, so a batch does not copy its buffer per call.
  const size_t need = out.size() + resp_header_size(argc) + bytes;
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
  append_resp_header(out, argc);
  for_each_argument(call, way, key_count,
                    [&](std::string_view a) { append_resp_argument(out, a); });
}

bool starts_with(const Reply& r, std::string_view prefix) {
  return r.is_error() && starts_with_any(r.text, {prefix});
}

// Which of a run's calls a round sends, in order: inline, as few are.
using CallIndexes = boost::container::small_vector<size_t, 4>;

// One run: the calls, their replies as they become final (kept here only
// once a call goes again), and who is told.
// Its rounds follow one another, each from the previous one's reply.
struct Run {
  Connection* node;
  std::atomic<ScriptMode>* mode;
  ReplicaWait replica_wait;
  std::vector<ScriptCall> calls;
  std::vector<Reply> replies;
  Deadline deadline;
  ReplyHandler done;
  // Cluster, after an ASK reply: each call goes behind an ASKING (which
  // lets the node that is importing its slot serve the next command).
  bool asking = false;
};

void send_round(const std::shared_ptr<Run>& run, CallIndexes which, Way way);

// Where a call whose reply is `r` goes next, or nullopt when `r` is final.
std::optional<Way> next_way(const Reply& r, Way way, bool load_failed) {
  switch (way) {
    case Way::fcall:
      if (functions_refused(r)) return Way::evalsha;
      if (starts_with(r, "ERR Function not found")) return Way::load_then_fcall;
      return std::nullopt;
    case Way::load_then_fcall:
      if (load_failed || function_not_run(r)) return Way::evalsha;
      return std::nullopt;
    case Way::evalsha:
      if (starts_with(r, "NOSCRIPT")) return Way::eval;
      return std::nullopt;
    case Way::eval: return std::nullopt;
  }
  return std::nullopt;
}

// `wait_ms`: the timeout of the WAIT that ends the round's replies; 0: none.
void on_round(const std::shared_ptr<Run>& run, const CallIndexes& which, Way way, int64_t wait_ms,
              Failure&& failure, std::vector<Reply>&& replies) {
  if (failure) return run->done(std::move(failure), {});
  size_t first = 0;
  bool load_failed = false;
  if (way == Way::load_then_fcall) {
    // Another client may have loaded it first: the same name is the same code.
    const Reply& load = replies[0];
    load_failed = load.is_error() && load.text.find("already exists") == std::string::npos;
    first = 1;
  }
  const size_t step = run->asking ? 2 : 1;  // ASKING's "OK" before each reply
  auto reply_of = [&](size_t j) -> Reply& { return replies[first + j * step + step - 1]; };
  if (wait_ms > 0) {
    // Only calls that ran need their writes on the replicas: a round whose
    // calls all got errors (MOVED, a missing function) wrote nothing.
    bool ran = false;
    for (size_t j = 0; j < which.size(); ++j) ran = ran || !reply_of(j).is_error();
    if (ran) {
      Failure short_of =
          wait_failure(replies.back(), run->replica_wait, wait_ms, run->node->name());
      if (short_of) return run->done(std::move(short_of), {});
    }
  }
  auto goes_again = [&](size_t j) { return next_way(reply_of(j), way, load_failed).has_value(); };
  // The usual round: every call, once, and every reply final: the replies
  // go on as they came, less the WAIT's.
  if (which.size() == run->calls.size() && first == 0 && step == 1) {
    bool all_final = true;
    for (size_t j = 0; all_final && j < which.size(); ++j) all_final = !goes_again(j);
    if (all_final) {
      replies.resize(which.size());
      return run->done(Failure{}, std::move(replies));
    }
  }
  if (run->replies.size() != run->calls.size()) run->replies.resize(run->calls.size());
  // Calls sent again all go the furthest way any of them needs: none of
  // them ran, so any way is right.
  CallIndexes again;
  Way then = way;
  for (size_t j = 0; j < which.size(); ++j) {
    Reply& r = reply_of(j);
    if (std::optional<Way> next = next_way(r, way, load_failed)) {
      again.push_back(which[j]);
      then = std::max(then, *next);
    } else {
      run->replies[which[j]] = std::move(r);
    }
  }
  if (again.empty()) return run->done(Failure{}, std::move(run->replies));
  if (then >= Way::evalsha && way <= Way::load_then_fcall)
    run->mode->store(ScriptMode::scripts, std::memory_order_relaxed);
  try {
    send_round(run, std::move(again), then);
  } catch (const Error& e) {  // the store closed meanwhile
    run->done(Failure{e.code(), e.what()}, {});
  }
}

// Throws what Connection::send throws (Code::shutdown).
void send_round(const std::shared_ptr<Run>& run, CallIndexes which, Way way) {
  Request request;
  request.deadline = run->deadline;
  request.count = which.size();
  if (way == Way::load_then_fcall) {
    request.commands += format_command({"FUNCTION", "LOAD", function_library().code});
    ++request.count;
  }
  for (size_t i : which) {
    if (run->asking) {
      static const std::string asking = format_command({"ASKING"});
      request.commands += asking;
      ++request.count;
    }
    append_call(request.commands, run->calls[i], way);
  }
  const bool writes =
      std::any_of(which.begin(), which.end(), [&](size_t i) { return run->calls[i].writes; });
  const int64_t wait_ms =
      run->replica_wait.on() && writes ? append_wait(request, run->replica_wait) : 0;
  request.done = [run, which = std::move(which), way, wait_ms](Failure&& f,
                                                               std::vector<Reply>&& replies) {
    on_round(run, which, way, wait_ms, std::move(f), std::move(replies));
  };
  run->node->send(std::move(request));
}

}  // namespace

bool usual_call(const ScriptCall& call) {
  const auto& a = call.args;
  return a.size() == 3 && a[0].empty() && a[1] == "1";
}

bool functions_refused(const Reply& r) {
  return r.is_error() && starts_with_any(r.text, {"ERR unknown command", "NOPERM"});
}

bool function_not_run(const Reply& r) {
  return functions_refused(r) ||
         (r.is_error() && starts_with_any(r.text, {"ERR Function not found"}));
}

void ScriptRunner::run(Connection& node, std::vector<ScriptCall> calls, Deadline deadline,
                       ReplyHandler done, bool asking) {
  auto run = std::make_shared<Run>();
  run->asking = asking;
  run->node = &node;  // lives as long as the I/O thread runs
  run->mode = &mode_;
  run->replica_wait = replica_wait_;
  run->calls = std::move(calls);
  run->deadline = deadline;
  run->done = std::move(done);
  CallIndexes all(run->calls.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  send_round(run, std::move(all), mode() == ScriptMode::functions ? Way::fcall : Way::evalsha);
}

}  // namespace rl::redis
