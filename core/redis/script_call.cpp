#include "script_call.h"

#include <memory>

namespace rl::redis {
namespace {

std::string format_script_call(const ScriptCall& call, bool by_sha) {
  std::vector<std::string_view> argv;
  argv.reserve(3 + call.keys.size() + call.args.size());
  const std::string key_count = std::to_string(call.keys.size());
  argv.push_back(by_sha ? "EVALSHA" : "EVAL");
  argv.push_back(by_sha ? call.script->sha1 : call.script->body);
  argv.push_back(key_count);
  for (const std::string& k : call.keys) argv.push_back(k);
  for (const std::string& a : call.args) argv.push_back(a);
  return format_command(argv);
}

bool is_noscript(const Reply& r) {
  return r.is_error() && r.text.compare(0, 8, "NOSCRIPT") == 0;
}

}  // namespace

void run_scripts(Connection& node, std::vector<ScriptCall> calls, Deadline deadline,
                 ReplyHandler done) {
  Request request;
  request.count = calls.size();
  request.deadline = deadline;
  for (const ScriptCall& c : calls) request.commands += format_script_call(c, true);
  auto shared_calls = std::make_shared<std::vector<ScriptCall>>(std::move(calls));
  Connection* connection = &node;  // lives as long as the I/O thread runs
  auto finish = std::make_shared<ReplyHandler>(std::move(done));
  request.done = [connection, shared_calls, deadline, finish](Failure&& failure,
                                                              std::vector<Reply>&& replies) {
    if (failure) return (*finish)(std::move(failure), {});
    std::vector<size_t> missing;
    Request reload;
    reload.deadline = deadline;
    for (size_t i = 0; i < replies.size(); ++i) {
      if (!is_noscript(replies[i])) continue;
      missing.push_back(i);
      reload.commands += format_script_call((*shared_calls)[i], false);
    }
    if (missing.empty()) return (*finish)(Failure{}, std::move(replies));
    reload.count = missing.size();
    auto first = std::make_shared<std::vector<Reply>>(std::move(replies));
    reload.done = [first, missing, finish](Failure&& f, std::vector<Reply>&& again) {
      if (f) return (*finish)(std::move(f), {});
      for (size_t j = 0; j < missing.size(); ++j) (*first)[missing[j]] = std::move(again[j]);
      (*finish)(Failure{}, std::move(*first));
    };
    try {
      connection->send(std::move(reload));
    } catch (const Error& e) {  // the store closed meanwhile
      (*finish)(Failure{e.code(), e.what()}, {});
    }
  };
  node.send(std::move(request));
}

}  // namespace rl::redis
