// Sliding log: one entry (time, cost) per admitted request. A request is
// admitted when the costs of the entries younger than one window, plus its
// own, fit in the limit. Exact; at most `limit` live entries per key, since
// every entry holds at least one unit.
//
// Each entry also carries the running total of the costs up to it, so a
// decision finds the first live entry and the entry that frees enough units
// by search (galloping from the oldest entry, then binary): O(log n) per
// decision, O(1) amortized per insert.
#pragma once

#include <algorithm>
#include <deque>
#include <iterator>

#include "config/rate.h"
#include "verdict.h"

namespace rl {

struct SlidingLog {
  struct Entry {
    int64_t at;
    int64_t cost;
    int64_t total;  // the costs of this entry and every older one in the deque
  };
  struct State {
    std::deque<Entry> entries;  // oldest first, `at` ascending
  };
  static constexpr const char* name = "sliding_log";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  // decide() on any random-access range of entries, oldest first: the Redis
  // module's lazy view of its list reads only the entries the searches touch.
  template <class Entries>
  static Verdict decide_in(const Entries& entries, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  // Gives back the newest units first, never from an entry stamped after
  // now: that is a lease's record (below), which covers its slice's uses.
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);

  // Leases (core/lease/; docs/algorithms.md, Leases). A slice's units are
  // recorded ahead, at the end of its lease (now + hold_us, or the newest
  // entry's instant when that is later), so every window that holds a use
  // of the slice holds its record; a log counts entries not yet begun.
  static bool may_lease(const State&, int64_t, int64_t hold_us) { return hold_us > 0; }
  // Op::lease, admitted: records the slice; returns its record's instant
  // (the grant's tag).
  static int64_t record_lease(State& s, const Rate& r, int64_t now, int64_t slice, int64_t hold_us);
  // Op::release: takes `units` off the record at `granted_at` (the tag)
  // when it is among the newest kReleaseReach entries; false, changing
  // nothing, when it is not there (gone with a reset, or expired).
  static bool give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                        int64_t slice);
  // How far back from the newest entry a release looks for its record: the
  // entries after it are later slices' records (the calls of other
  // processes meanwhile join them), one or two per process.
  static constexpr int kReleaseReach = 64;
  // std::partition_point's answer, found by galloping from the front: it
  // reads O(log k) entries when the answer is k entries in. A busy log's
  // first live entry is nearly always its oldest, and the Redis module's
  // list reads entries near where it last read cheaply, far ones dearly
  // (a binary search there walks the whole list).
  template <class It, class Pred>
  static It search_from_front(It first, It last, Pred pred);
};

template <class It, class Pred>
It SlidingLog::search_from_front(It first, It last, Pred pred) {
  typename std::iterator_traits<It>::difference_type step = 1;
  while (first != last) {
    const It probe = first + std::min(step, last - first) - 1;
    if (!pred(*probe)) return std::partition_point(first, probe, pred);
    first = probe + 1;
    step *= 2;
  }
  return first;
}

template <class Entries>
Verdict SlidingLog::decide_in(const Entries& entries, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  // An entry made at `at` counts while now - at < window. Entries are in
  // time order, so the live ones are a suffix: found by search.
  const auto first = search_from_front(entries.begin(), entries.end(),
                                       [&](const Entry& e) { return now - e.at >= r.window_us; });
  int64_t used = 0;
  int64_t newest = -1;
  int64_t before = 0;  // the running total before the first live entry
  if (first != entries.end()) {
    before = first->total - first->cost;
    used = entries.back().total - before;
    newest = entries.back().at;
  }
  if (cost > r.limit) {
    v.retry_after_us = -1;
  } else if (used + cost <= r.limit) {
    v.allowed = true;
    used += cost;
    if (cost > 0) newest = std::max(newest, now);  // it joins an entry stamped ahead
  } else {
    // Wait until enough of the oldest entries have left the window: the
    // first entry whose running total frees `to_free` units.
    const int64_t to_free = used + cost - r.limit;
    const auto freeing = search_from_front(
        first, entries.end(), [&](const Entry& e) { return e.total - before < to_free; });
    v.retry_after_us = freeing->at + r.window_us - now;
  }
  v.remaining = r.limit - used;
  v.reset_after_us = newest < 0 ? 0 : newest + r.window_us - now;
  return v;
}

}  // namespace rl
