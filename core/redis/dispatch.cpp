#include "dispatch.h"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>

#include "error.h"
#include "error_reply.h"

namespace rl::redis {

// A cluster submission: its calls (kept, since a call may go again), their
// results, and how many sends and waits are still out.
struct Dispatcher::Join {
  std::mutex mutex;
  std::vector<ScriptCall> calls;
  std::vector<CallResult> results;
  Deadline deadline;
  ResultsHandler done;
  size_t outstanding = 0;
  bool abandoned = false;
};

// Calls waiting kRetryDelay before they go again.
struct Dispatcher::Wait {
  explicit Wait(boost::asio::io_context& io) : timer(io) {}
  boost::asio::steady_timer timer;
  std::shared_ptr<Join> join;
  std::vector<Attempt> attempts;
  int redirects = 0;
};

void Dispatcher::submit(std::vector<ScriptCall> calls, Deadline deadline, ResultsHandler done) {
  if (!topology_.is_cluster())
    return submit_to_one_node(std::move(calls), deadline, std::move(done));
  auto join = std::make_shared<Join>();
  join->results.resize(calls.size());
  join->calls = std::move(calls);
  join->deadline = deadline;
  join->done = std::move(done);
  std::vector<Attempt> attempts;
  attempts.reserve(join->calls.size());
  for (size_t i = 0; i < join->calls.size(); ++i) attempts.push_back({i, nullptr, false});
  send(join, attempts, 0, true);
}

void Dispatcher::submit_one(ScriptCall call, Deadline deadline, ResultHandler done) {
  if (topology_.is_cluster()) {  // its calls may go again: they are kept in a Join
    std::vector<ScriptCall> calls;
    calls.push_back(std::move(call));
    return submit(std::move(calls), deadline,
                  [done = std::move(done)](std::vector<CallResult>&& results) {
                    done(std::move(results[0]));
                  });
  }
  uint32_t slot = 0;
  Connection& node = topology_.node_for(call.keys.at(0), slot);
  auto handler = [done = std::move(done), &node](Failure&& f, std::vector<Reply>&& replies) {
    CallResult result;
    result.node = &node;
    if (f) {
      result.failure = std::move(f);
    } else {
      result.reply = std::move(replies[0]);
    }
    done(std::move(result));
  };
  if (coalescer_ != nullptr) {
    coalescer_->run(node, slot, std::move(call), deadline, std::move(handler));
  } else {
    std::vector<ScriptCall> calls;
    calls.push_back(std::move(call));
    scripts_.run(node, std::move(calls), deadline, std::move(handler));
  }
}

void Dispatcher::submit_to_one_node(std::vector<ScriptCall> calls, Deadline deadline,
                                    ResultsHandler done) {
  if (calls.size() == 1) {  // the one-call path, which may coalesce it
    return submit_one(std::move(calls[0]), deadline, [done = std::move(done)](CallResult&& result) {
      std::vector<CallResult> results;
      results.push_back(std::move(result));
      done(std::move(results));
    });
  }
  uint32_t slot = 0;
  Connection& node = topology_.node_for(calls.at(0).keys.at(0), slot);
  auto gather = [done = std::move(done), count = calls.size(), &node](
                    Failure&& f, std::vector<Reply>&& replies) {
    std::vector<CallResult> results(count);
    for (size_t i = 0; i < count; ++i) {
      results[i].node = &node;
      if (f) {
        results[i].failure = f;
      } else {
        results[i].reply = std::move(replies[i]);
      }
    }
    done(std::move(results));
  };
  scripts_.run(node, std::move(calls), deadline, std::move(gather));
}

void Dispatcher::send(const std::shared_ptr<Join>& join, const std::vector<Attempt>& attempts,
                      int redirects, bool from_caller) {
  struct Group {
    Connection* node;
    bool asking;
    bool alone;
    uint32_t slot;  // of its first call (the coalescer's lane)
    std::vector<size_t> indices;
  };
  std::vector<Group> groups;
  for (const Attempt& a : attempts) {
    uint32_t slot = 0;
    Connection* node = &topology_.node_for(join->calls[a.index].keys.at(0), slot);
    if (a.node != nullptr) node = a.node;
    auto same = [&](const Group& g) {
      return g.node == node && g.asking == a.asking && g.alone == a.alone;
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      it = groups.insert(groups.end(), Group{node, a.asking, a.alone, slot, {}});
    }
    it->indices.push_back(a.index);
  }
  {
    std::lock_guard lock(join->mutex);
    join->outstanding += groups.size();
  }
  if (groups.size() > 1) forgo_sync_call();  // each node's request leaves at once
  for (Group& g : groups) {
    std::vector<ScriptCall> calls;
    calls.reserve(g.indices.size());
    for (size_t i : g.indices) calls.push_back(join->calls[i]);  // kept: it may go again
    auto handler = [this, join, indices = g.indices, node = g.node, redirects](
                       Failure&& f, std::vector<Reply>&& replies) {
      on_replies(join, indices, *node, redirects, std::move(f), std::move(replies));
    };
    try {
      if (calls.size() == 1 && coalescer_ != nullptr && !g.asking && !g.alone) {
        // The Lua calls of every slot of the node leave together.
        const uint32_t lane = scripts_.uses_module(*g.node) ? g.slot : Coalescer::kWholeNode;
        coalescer_->run(*g.node, lane, std::move(calls[0]), join->deadline, std::move(handler));
      } else {
        scripts_.run(*g.node, std::move(calls), join->deadline, std::move(handler), g.asking);
      }
    } catch (const Error& e) {
      if (from_caller) {
        std::lock_guard lock(join->mutex);
        join->abandoned = true;
        throw;
      }
      for (size_t i : g.indices) join->results[i].failure = Failure{e.code(), e.what()};
      finish_one(join);
    }
  }
}

void Dispatcher::on_replies(const std::shared_ptr<Join>& join, const std::vector<size_t>& indices,
                            Connection& node, int redirects, Failure&& failure,
                            std::vector<Reply>&& replies) {
  std::vector<Attempt> redirected;
  std::vector<Attempt> later;
  bool reread_map = false;
  const bool can_wait = std::chrono::steady_clock::now() + kRetryDelay < join->deadline;
  for (size_t k = 0; k < indices.size(); ++k) {
    CallResult& out = join->results[indices[k]];
    out.node = &node;
    if (failure) {
      // A node down or hung: its replica may be taking over.
      reread_map =
          reread_map || failure.code == Code::backend_unavailable || failure.code == Code::timeout;
      if (failure.unsent && failure.code != Code::shutdown && can_wait) {
        later.push_back({indices[k], nullptr, false});
      } else {
        out.failure = failure;
      }
      continue;
    }
    Reply& r = replies[k];
    // A node batch declares its first key only: a node that lost the slot
    // of another, or became a replica, refuses that call without MOVED.
    const bool readonly = r.is_error() && starts_with_any(r.text, {"READONLY"});
    if (r.is_error() && redirects < kMaxRedirects && (refused_in_batch(r.text) || readonly)) {
      reread_map = reread_map || readonly;
      redirected.push_back({indices[k], nullptr, false, true});
      continue;
    }
    if (r.is_error()) {
      const std::optional<Redirect> redirect = parse_redirect(r.text);
      if (redirect && redirects < kMaxRedirects) {
        if (Connection* to = topology_.redirect(*redirect, node)) {
          redirected.push_back({indices[k], to, redirect->kind == Redirect::Kind::ask});
          continue;
        }
      } else if (redirect || refused_in_batch(r.text) || readonly ||
                 starts_with_any(r.text, {"TRYAGAIN", "CLUSTERDOWN"}) || down_in_batch(r.text)) {
        // Redirected (or refused in a node batch) too often: nodes that
        // disagree while a slot moves; or the cluster is busy: wait for it
        // to settle.
        reread_map = true;
        if (can_wait) {
          later.push_back({indices[k], nullptr, false});
          continue;
        }
      }
    }
    out.reply = std::move(r);
  }
  if (reread_map) topology_.refresh(&node);
  if (!redirected.empty()) send(join, redirected, redirects + 1, false);
  if (!later.empty()) send_later(join, std::move(later), redirects);
  finish_one(join);
}

void Dispatcher::send_later(const std::shared_ptr<Join>& join, std::vector<Attempt> attempts,
                            int redirects) {
  auto wait = std::make_shared<Wait>(io_);
  wait->join = join;
  wait->attempts = std::move(attempts);
  wait->redirects = redirects;
  {
    std::lock_guard lock(join->mutex);
    ++join->outstanding;
  }
  {
    std::lock_guard lock(waits_mutex_);
    waits_.insert(wait);
  }
  wait->timer.expires_after(kRetryDelay);
  wait->timer.async_wait([this, wait](const boost::system::error_code&) {
    {
      std::lock_guard lock(waits_mutex_);
      if (waits_.erase(wait) == 0) return;  // shut_down() told it
    }
    send(wait->join, wait->attempts, wait->redirects, false);
    finish_one(wait->join);
  });
}

void Dispatcher::shut_down() {
  std::set<std::shared_ptr<Wait>> waits;
  {
    std::lock_guard lock(waits_mutex_);
    waits.swap(waits_);
  }
  for (const auto& wait : waits) {
    wait->timer.cancel();
    for (const Attempt& a : wait->attempts)
      wait->join->results[a.index].failure = Failure{Code::shutdown, "store: closed"};
    finish_one(wait->join);
  }
}

void Dispatcher::finish_one(const std::shared_ptr<Join>& join) {
  ResultsHandler done;
  {
    std::lock_guard lock(join->mutex);
    if (--join->outstanding != 0 || join->abandoned) return;
    done = std::move(join->done);
  }
  done(std::move(join->results));
}

}  // namespace rl::redis
