// The request pipeline of one connection, with no I/O: requests waiting for
// the next write, requests written and awaiting replies in order, their
// deadlines, and failing what is held when the connection breaks. The
// connection (connection.cpp, direct_path.cpp) moves bytes and runs
// timers; this decides what they mean. Unit tests drive it without a
// socket (tests/unit/pipeline_test.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "connection.h"

namespace rl::redis {

// A handler to run once the pipeline's own state is consistent again: it
// may send, or close the store.
struct Completion {
  ReplyHandler done;
  Failure failure;
  std::vector<Reply> replies;
  void run() { done(std::move(failure), std::move(replies)); }
};
using Completions = std::vector<Completion>;

void run_all(Completions& completions);

class Pipeline {
 public:
  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();  // gives back its share of requests_held()

  // Waits for the next write.
  void enqueue(Request request);
  // Everything waiting, in one buffer: those requests now await replies.
  std::string take_write();
  // A request whose commands were written by someone else (a caller's direct
  // write, the handshake): it awaits replies after those already awaited.
  void add_written(Request request);

  bool has_unsent() const { return !unsent_.empty(); }
  bool awaiting() const { return !in_flight_.empty(); }
  bool empty() const { return unsent_.empty() && in_flight_.empty(); }
  size_t held() const { return unsent_.size() + in_flight_.size(); }

  enum class Matched { partial, complete, unexpected };
  // The next reply in order. complete: `out` holds the request's handler and
  // replies (none if it timed out meanwhile: `out.done` is then empty).
  // unexpected: nothing awaited a reply (a protocol error).
  Matched on_reply(Reply reply, Completion& out);

  // The earliest deadline of a request someone still waits for.
  std::optional<Deadline> earliest_deadline() const;
  // Requests past their deadline at `now` fail: written ones with
  // `awaited` (they keep their place until their replies arrive), unsent
  // ones with `unsent` (they leave the queue).
  Completions expire(Deadline now, const Failure& awaited, const Failure& unsent);
  // Every request held fails with `failure` (written ones may have run:
  // they are never resent); the pipeline is empty afterwards.
  Completions fail_all(const Failure& failure);

 private:
  struct Pending {
    Request request;
    size_t received = 0;
    std::vector<Reply> replies;  // kept only while someone waits for them
  };
  void count_held();

  std::deque<Pending> unsent_;
  std::deque<Pending> in_flight_;
  int64_t counted_ = 0;  // this pipeline's share of requests_held()
};

}  // namespace rl::redis
