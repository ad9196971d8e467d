// The request pipeline without a socket: what leaves in the next write,
// replies matched in order, deadlines, failing what is held, and the
// requests_held() bookkeeping.
#include "redis/pipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "redis/resp.h"

namespace rl::redis {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What the handlers saw, by request.
struct Seen {
  std::vector<Code> codes;
  std::vector<std::vector<std::string>> replies;
};

Request request(Seen& seen, int id, std::vector<std::string_view> args, size_t count = 1,
                Deadline deadline = Deadline::max()) {
  Request r;
  for (size_t i = 0; i < count; ++i) r.commands += format_command(args);
  r.count = count;
  r.deadline = deadline;
  r.done = [&seen, id](Failure&& f, std::vector<Reply>&& replies) {
    if (seen.codes.size() <= static_cast<size_t>(id)) {
      seen.codes.resize(id + 1, Code::internal);
      seen.replies.resize(id + 1);
    }
    seen.codes[id] = f.code;
    for (const Reply& r : replies) seen.replies[id].push_back(r.text);
  };
  return r;
}

Reply status(std::string text) {
  Reply r;
  r.type = Reply::Type::status;
  r.text = std::move(text);
  return r;
}

// Feeds one reply; runs the completion if it completed a request.
Pipeline::Matched feed(Pipeline& p, std::string text) {
  Completion c;
  const Pipeline::Matched m = p.on_reply(status(std::move(text)), c);
  if (m == Pipeline::Matched::complete && c.done) c.run();
  return m;
}

TEST(Pipeline, EverythingQueuedLeavesInOneWriteInOrder) {
  Seen seen;
  Pipeline p;
  p.enqueue(request(seen, 0, {"PING"}));
  p.enqueue(request(seen, 1, {"ECHO", "a"}));
  EXPECT_TRUE(p.has_unsent());
  EXPECT_FALSE(p.awaiting());
  EXPECT_EQ(p.take_write(), format_command({"PING"}) + format_command({"ECHO", "a"}));
  EXPECT_FALSE(p.has_unsent());
  EXPECT_TRUE(p.awaiting());
  EXPECT_EQ(p.take_write(), "");  // nothing new: an empty write
}

TEST(Pipeline, RepliesCompleteRequestsInOrderAndMultiCommandRequestsWhole) {
  Seen seen;
  Pipeline p;
  p.enqueue(request(seen, 0, {"PING"}));
  p.enqueue(request(seen, 1, {"PING"}, 3));
  p.take_write();
  EXPECT_EQ(feed(p, "first"), Pipeline::Matched::complete);
  EXPECT_EQ(feed(p, "a"), Pipeline::Matched::partial);
  EXPECT_EQ(feed(p, "b"), Pipeline::Matched::partial);
  EXPECT_EQ(feed(p, "c"), Pipeline::Matched::complete);
  ASSERT_EQ(seen.codes.size(), 2u);
  EXPECT_EQ(seen.replies[0], std::vector<std::string>{"first"});
  EXPECT_EQ(seen.replies[1], (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(feed(p, "stray"), Pipeline::Matched::unexpected);
}

TEST(Pipeline, WrittenElsewhereAwaitsAfterThoseAlreadyAwaited) {
  Seen seen;
  Pipeline p;
  p.enqueue(request(seen, 0, {"PING"}));
  p.take_write();
  p.add_written(request(seen, 1, {"PING"}));  // a caller's direct write
  p.enqueue(request(seen, 2, {"PING"}));      // not yet written
  feed(p, "zero");
  feed(p, "one");
  EXPECT_EQ(seen.replies[0], std::vector<std::string>{"zero"});
  EXPECT_EQ(seen.replies[1], std::vector<std::string>{"one"});
  EXPECT_TRUE(p.has_unsent());
  EXPECT_FALSE(p.awaiting());
}

TEST(Pipeline, ATimedOutRequestKeepsItsPlaceUntilItsReplyArrives) {
  Seen seen;
  Pipeline p;
  const Deadline t0 = Clock::now();
  p.enqueue(request(seen, 0, {"PING"}, 1, t0 + milliseconds(10)));
  p.enqueue(request(seen, 1, {"PING"}, 1, t0 + milliseconds(50)));
  p.take_write();
  ASSERT_EQ(p.earliest_deadline(), t0 + milliseconds(10));
  Completions late =
      p.expire(t0 + milliseconds(20), Failure{Code::timeout, "late"}, Failure{Code::timeout, "x"});
  ASSERT_EQ(late.size(), 1u);
  run_all(late);
  EXPECT_EQ(seen.codes[0], Code::timeout);
  // The one left waits; the timed-out one no longer counts for the timer.
  EXPECT_EQ(p.earliest_deadline(), t0 + milliseconds(50));
  EXPECT_EQ(p.held(), 2u);
  // Its reply still arrives first, and goes to nobody.
  Completion c;
  EXPECT_EQ(p.on_reply(status("for 0"), c), Pipeline::Matched::complete);
  EXPECT_FALSE(c.done);
  feed(p, "for 1");
  EXPECT_EQ(seen.replies[1], std::vector<std::string>{"for 1"});
  EXPECT_EQ(seen.codes[1], Code::ok);
  EXPECT_EQ(seen.codes.size(), 2u);
}

TEST(Pipeline, AnUnsentRequestPastItsDeadlineLeavesTheQueue) {
  Seen seen;
  Pipeline p;
  const Deadline t0 = Clock::now();
  p.enqueue(request(seen, 0, {"PING"}, 1, t0));
  p.enqueue(request(seen, 1, {"PING"}, 1, Deadline::max()));
  EXPECT_EQ(p.earliest_deadline(), t0);  // no deadline (max) never arms a timer
  Completions late = p.expire(t0, Failure{Code::timeout, "awaited"},
                              Failure{Code::timeout, "not connected before the deadline"});
  run_all(late);
  EXPECT_EQ(seen.codes[0], Code::timeout);
  EXPECT_EQ(p.held(), 1u);
  EXPECT_EQ(p.take_write(), format_command({"PING"}));  // only the other one
}

TEST(Pipeline, FailAllCompletesEveryRequestOnceAndEmptiesIt) {
  Seen seen;
  Pipeline p;
  p.enqueue(request(seen, 0, {"PING"}));
  p.take_write();
  p.enqueue(request(seen, 1, {"PING"}));
  Completions failed = p.fail_all(Failure{Code::backend_unavailable, "gone"});
  EXPECT_EQ(failed.size(), 2u);
  EXPECT_TRUE(p.empty());
  run_all(failed);
  EXPECT_EQ(seen.codes, (std::vector<Code>{Code::backend_unavailable, Code::backend_unavailable}));
  EXPECT_EQ(p.fail_all(Failure{Code::shutdown, "closed"}).size(), 0u);
}

TEST(Pipeline, RequestsHeldCountsWhatEveryPipelineHolds) {
  const size_t before = requests_held();
  Seen seen;
  {
    Pipeline a;
    Pipeline b;
    a.enqueue(request(seen, 0, {"PING"}));
    a.enqueue(request(seen, 1, {"PING"}));
    b.add_written(request(seen, 2, {"PING"}));
    EXPECT_EQ(requests_held(), before + 3);
    a.take_write();  // written, still held
    EXPECT_EQ(requests_held(), before + 3);
    feed(a, "x");
    EXPECT_EQ(requests_held(), before + 2);
    auto failed = b.fail_all(Failure{Code::shutdown, "closed"});
    EXPECT_EQ(requests_held(), before + 1);
  }
  // A pipeline destroyed while holding gives its share back.
  EXPECT_EQ(requests_held(), before);
}

}  // namespace
}  // namespace rl::redis
