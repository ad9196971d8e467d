#include "module_runner.h"

#include <algorithm>
#include <memory>

#include "error.h"
#include "error_reply.h"
#include "resp.h"

namespace rl::redis {
namespace {

std::string_view command_of(Op op) {
  switch (op) {
    case Op::acquire: return "RL.ACQUIRE";
    case Op::peek: return "RL.PEEK";
    case Op::refund: return "RL.REFUND";
    case Op::reset: return "RL.RESET";
    case Op::lease: return "RL.LEASE";
    case Op::release: return "RL.RELEASE";
  }
  return "RL.RESET";
}

std::string format_module_call(const ScriptCall& call) {
  std::vector<std::string_view> argv = {command_of(call.op), call.keys.at(0),
                                        algorithm_name(call.algorithm)};
  for (const std::string& a : call.args) argv.push_back(a);
  return format_command(argv);
}

}  // namespace

struct ModuleRun {
  Connection* node;
  std::vector<ScriptCall> calls;
  Deadline deadline;
  ReplyHandler done;
  bool asking;
};

bool ModuleRunner::module_refused(const Reply& r) {
  return r.is_error() && starts_with_any(r.text, {"ERR unknown command", "NOPERM"});
}

bool ModuleRunner::lacks_module(const Connection& node, const Learned& learned) {
  return !learned.has_module && learned.connection == node.connections();
}

bool ModuleRunner::known(const Connection& node) const {
  std::lock_guard lock(mutex_);
  const auto it = learned_.find(&node);
  return it != learned_.end() && (it->second.has_module || lacks_module(node, it->second));
}

void ModuleRunner::wait_after(const std::shared_ptr<ModuleRun>& run, std::vector<Reply>&& out) {
  Request request;
  request.deadline = run->deadline;
  request.count = 0;
  const int64_t wait_ms = append_wait(request, scripts_.replica_wait());
  auto replies = std::make_shared<std::vector<Reply>>(std::move(out));
  request.done = [this, run, replies, wait_ms](Failure&& f, std::vector<Reply>&& wait) {
    if (!f) f = wait_failure(wait.back(), scripts_.replica_wait(), wait_ms, run->node->name());
    if (f) return run->done(std::move(f), {});
    run->done(Failure{}, std::move(*replies));
  };
  try {
    run->node->send(std::move(request));
  } catch (const Error& e) {  // the store closed meanwhile
    run->done(Failure{e.code(), e.what()}, {});
  }
}

bool ModuleRunner::uses_module(const Connection& node) const {
  if (use_ == ModuleUse::off) return false;
  if (use_ == ModuleUse::required) return true;
  std::lock_guard lock(mutex_);
  const auto it = learned_.find(&node);
  return it == learned_.end() || !lacks_module(node, it->second);  // unknown: try it
}

bool ModuleRunner::has_module(const Connection& node) const {
  if (use_ != ModuleUse::automatic) return use_ == ModuleUse::required;
  std::lock_guard lock(mutex_);
  const auto it = learned_.find(&node);
  return it != learned_.end() && it->second.has_module;
}

bool ModuleRunner::coalesces(const Connection& node) const {
  return uses_module(node) || scripts_.mode() == ScriptMode::functions;
}

// On the thread that read the reply, before the node's connection can be
// made again: the reply came on the connection counted now.
void ModuleRunner::learned(const Connection& node, bool has_module) {
  std::lock_guard lock(mutex_);
  learned_[&node] = Learned{has_module, node.connections()};
}

DecidesWith ModuleRunner::decides_with() const {
  DecidesWith d;
  d.lua = scripts_.mode() == ScriptMode::functions ? "functions" : "scripts";
  switch (use_) {
    case ModuleUse::automatic: d.script_mode = "auto"; break;
    case ModuleUse::required: d.script_mode = "module"; break;
    case ModuleUse::off:
      d.script_mode = scripts_.configured() == ScriptMode::functions ? "functions" : "scripts";
      return d;
  }
  std::lock_guard lock(mutex_);
  for (const auto& [node, seen] : learned_) ++(seen.has_module ? d.module_nodes : d.lua_nodes);
  return d;
}

// A module call's args: now, cost, limits.
bool ModuleRunner::one_limiter(const ScriptCall& first, const ScriptCall& call) {
  return call.algorithm == first.algorithm && call.op == first.op && call.args.size() == 3 &&
         first.args.size() == 3 && call.args[0] == first.args[0] && call.args[2] == first.args[2];
}

void ModuleRunner::start_many(std::vector<std::string_view>& argv, const ScriptCall& first) {
  argv.push_back("RL.MANY");
  argv.push_back(call_name(first.algorithm, first.op));
  argv.push_back(first.args.at(0));
  argv.push_back(first.args.at(2));
}

void ModuleRunner::append_many(std::vector<std::string_view>& argv, const ScriptCall& call) {
  argv.push_back(call.keys.at(0));
  argv.push_back(call.args.at(1));
}

bool ModuleRunner::takes_many(const Connection& node) const {
  std::lock_guard lock(mutex_);
  const auto it = many_refused_.find(&node);
  return it == many_refused_.end() || it->second != node.connections();
}

void ModuleRunner::refused_many(const Connection& node) {
  std::lock_guard lock(mutex_);
  many_refused_[&node] = node.connections();
}

void ModuleRunner::append_batch(std::vector<std::string_view>& argv, const ScriptCall& call) {
  argv.push_back(call.keys.at(0));
  argv.push_back(call_name(call.algorithm, call.op));
  for (const std::string& a : call.args) argv.push_back(a);
}

void ModuleRunner::run(Connection& node, std::vector<ScriptCall> calls, Deadline deadline,
                       ReplyHandler done, bool asking) {
  if (!uses_module(node)) {
    return scripts_.run(node, std::move(calls), deadline, std::move(done), asking);
  }
  auto run = std::make_shared<ModuleRun>(
      ModuleRun{&node, std::move(calls), deadline, std::move(done), asking});
  Request request;
  request.deadline = deadline;
  request.count = run->calls.size() * (asking ? 2 : 1);
  for (const ScriptCall& c : run->calls) {
    if (asking) request.commands += format_command({"ASKING"});
    request.commands += format_module_call(c);
  }
  const bool writes = std::any_of(run->calls.begin(), run->calls.end(),
                                  [](const ScriptCall& c) { return c.writes; });
  const ReplicaWait& wait = scripts_.replica_wait();
  // A first call to a node (or the first since its connection was made
  // again, after one found no module) may find no module: its WAIT would
  // wait for nothing before the call goes again as Lua (with its own). So
  // the probe leaves alone, and a WAIT follows only once it ran.
  const bool probing = use_ == ModuleUse::automatic && !known(node);
  const bool waits = wait.on() && writes;
  const int64_t wait_ms = waits && !probing ? append_wait(request, wait) : 0;
  request.done = [this, run, wait_ms, waits, probing](Failure&& f, std::vector<Reply>&& replies) {
    if (f) return run->done(std::move(f), {});
    const size_t step = run->asking ? 2 : 1;  // ASKING's "OK" before each reply
    std::vector<Reply> out(run->calls.size());
    std::vector<size_t> again;  // calls the node refused: not run
    bool ran = false;
    for (size_t i = 0; i < run->calls.size(); ++i) {
      Reply& r = replies[i * step + step - 1];
      if (module_refused(r)) {
        again.push_back(i);
        continue;
      }
      ran = ran || !r.is_error();
      out[i] = std::move(r);
    }
    if (wait_ms > 0 && ran) {
      Failure short_of =
          wait_failure(replies.back(), scripts_.replica_wait(), wait_ms, run->node->name());
      if (short_of) return run->done(std::move(short_of), {});
    }
    if (again.empty() || use_ == ModuleUse::required) {
      for (size_t i : again) {
        out[i] = Reply{};
        out[i].type = Reply::Type::error;
        out[i].text = "ERR script_mode=module: " + run->node->name() +
                      " has no rl module (librl_redis.so) this user may run: " +
                      replies[i * step + step - 1].text;
      }
      if (probing && ran) learned(*run->node, true);
      if (waits && probing && ran) return wait_after(run, std::move(out));
      return run->done(Failure{}, std::move(out));
    }
    std::vector<ScriptCall> lua;
    for (size_t i : again) lua.push_back(std::move(run->calls[i]));
    auto merged = std::make_shared<std::vector<Reply>>(std::move(out));
    // Learned only once the calls went again as Lua: until then the node
    // counts as maybe having the module, and the Coalescer sends no second
    // batch behind this call, which would reach Redis before it.
    struct Learn {
      ModuleRunner* runner;
      const Connection* node;
      ~Learn() { runner->learned(*node, false); }
    } learn{this, run->node};
    try {
      scripts_.run(
          *run->node, std::move(lua), run->deadline,
          [run, merged, again](Failure&& f, std::vector<Reply>&& lua_replies) {
            if (f) return run->done(std::move(f), {});
            for (size_t j = 0; j < again.size(); ++j) {
              (*merged)[again[j]] = std::move(lua_replies[j]);
            }
            run->done(Failure{}, std::move(*merged));
          },
          run->asking);
    } catch (const Error& e) {  // the store closed meanwhile
      run->done(Failure{e.code(), e.what()}, {});
    }
  };
  node.send(std::move(request));
}

}  // namespace rl::redis
