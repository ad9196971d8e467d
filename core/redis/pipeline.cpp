#include "pipeline.h"

#include <algorithm>
#include <atomic>
#include <utility>

namespace rl::redis {
namespace {

std::atomic<int64_t> g_requests_held{0};

}  // namespace

size_t requests_held() {
  return static_cast<size_t>(g_requests_held.load(std::memory_order_relaxed));
}

void run_all(Completions& completions) {
  for (Completion& c : completions) c.run();
}

Pipeline::~Pipeline() {
  g_requests_held.fetch_sub(counted_, std::memory_order_relaxed);
}

void Pipeline::count_held() {
  const auto held = static_cast<int64_t>(this->held());
  g_requests_held.fetch_add(held - counted_, std::memory_order_relaxed);
  counted_ = held;
}

void Pipeline::enqueue(Request request) {
  unsent_.push_back(Pending{std::move(request), 0, {}});
  count_held();
}

std::string Pipeline::take_write() {
  std::string bytes;
  for (Pending& p : unsent_) {
    bytes += std::exchange(p.request.commands, {});
    in_flight_.push_back(std::move(p));
  }
  unsent_.clear();
  return bytes;
}

void Pipeline::add_written(Request request) {
  request.commands.clear();
  in_flight_.push_back(Pending{std::move(request), 0, {}});
  count_held();
}

Pipeline::Matched Pipeline::on_reply(Reply reply, Completion& out) {
  if (in_flight_.empty()) return Matched::unexpected;
  Pending& front = in_flight_.front();
  // A request that timed out keeps its place until its replies arrive.
  if (front.request.done) front.replies.push_back(std::move(reply));
  if (++front.received < front.request.count) return Matched::partial;
  out = Completion{std::move(front.request.done), Failure{}, std::move(front.replies)};
  in_flight_.pop_front();
  count_held();
  return Matched::complete;
}

std::optional<Deadline> Pipeline::earliest_deadline() const {
  std::optional<Deadline> at;
  auto consider = [&](const Pending& p) {
    if (!p.request.done || p.request.deadline == Deadline::max()) return;
    if (!at || p.request.deadline < *at) at = p.request.deadline;
  };
  for (const Pending& p : in_flight_) consider(p);
  for (const Pending& p : unsent_) consider(p);
  return at;
}

Completions Pipeline::expire(Deadline now, const Failure& awaited, const Failure& unsent) {
  Completions late;
  for (Pending& p : in_flight_) {
    if (p.request.done && p.request.deadline <= now) {
      late.push_back(Completion{std::exchange(p.request.done, nullptr), awaited, {}});
    }
  }
  std::erase_if(unsent_, [&](Pending& p) {
    if (p.request.deadline > now) return false;
    late.push_back(Completion{std::move(p.request.done), unsent, {}});
    return true;
  });
  count_held();
  return late;
}

Completions Pipeline::fail_all(const Failure& failure) {
  Completions out;
  for (Pending& p : in_flight_) {
    if (p.request.done) out.push_back(Completion{std::move(p.request.done), failure, {}});
  }
  Failure never_left = failure;
  never_left.unsent = true;
  for (Pending& p : unsent_) out.push_back(Completion{std::move(p.request.done), never_left, {}});
  in_flight_.clear();
  unsent_.clear();
  count_held();
  return out;
}

}  // namespace rl::redis
