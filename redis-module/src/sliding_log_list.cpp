#include "sliding_log_list.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <unordered_map>

#include "algorithms/decide.h"
#include "algorithms/sliding_log.h"
#include "clock.h"
#include "command_error.h"

namespace rl::module {
namespace {

using Entry = SlidingLog::Entry;

constexpr int64_t kTwo53 = int64_t{1} << 53;
// Running totals start again from 0 beyond this (lua REBASE_AT).
constexpr int64_t kRebaseAt = int64_t{1} << 51;

std::string pack(const Entry& e) {
  std::string out(24, '\0');
  const int64_t v[3] = {e.at, e.cost, e.total};
  for (int i = 0; i < 3; ++i) {
    const auto u = static_cast<uint64_t>(v[i]);
    for (int b = 0; b < 8; ++b) out[8 * i + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return out;
}

Entry unpack(const char* p, size_t len) {
  if (len != 24) throw CommandError("corrupt value: a sliding_log entry is not 24 bytes");
  int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    uint64_t u = 0;
    for (int b = 7; b >= 0; --b) u = (u << 8) | static_cast<unsigned char>(p[8 * i + b]);
    v[i] = static_cast<int64_t>(u);
  }
  const Entry e{v[0], v[1], v[2]};
  if (e.at < 0 || e.at > kTwo53 || e.cost < 0 || e.cost > kMaxLimit || e.total < e.cost ||
      e.total > kTwo53) {
    throw CommandError("corrupt value: a sliding_log entry is out of range");
  }
  return e;
}

// The list as a random-access range of entries, each read once, when used.
// ListGet keeps an iterator on the key handle and moves it one entry at a
// time from where it last read (Redis 7.0): a read far from there reopens
// the key instead, so that ListGet seeks afresh, from the nearer end.
class ListView {
 public:
  ListView(RedisModuleCtx* ctx, RedisModuleKey*& key, RedisModuleString* name, int mode, long size)
      : ctx_(ctx), key_(key), name_(name), mode_(mode), size_(size) {}

  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Entry;
    using difference_type = long;
    using pointer = const Entry*;
    using reference = const Entry&;
    iterator() = default;
    iterator(const ListView* v, long i) : v_(v), i_(i) {}
    reference operator*() const { return v_->at(i_); }
    pointer operator->() const { return &v_->at(i_); }
    reference operator[](long n) const { return v_->at(i_ + n); }
    iterator& operator++() { return ++i_, *this; }
    iterator operator++(int) { return {v_, i_++}; }
    iterator& operator--() { return --i_, *this; }
    iterator operator--(int) { return {v_, i_--}; }
    iterator& operator+=(long n) { return i_ += n, *this; }
    iterator& operator-=(long n) { return i_ -= n, *this; }
    iterator operator+(long n) const { return {v_, i_ + n}; }
    iterator operator-(long n) const { return {v_, i_ - n}; }
    friend iterator operator+(long n, const iterator& it) { return it + n; }
    long operator-(const iterator& o) const { return i_ - o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    auto operator<=>(const iterator& o) const { return i_ <=> o.i_; }
    long index() const { return i_; }

   private:
    const ListView* v_ = nullptr;
    long i_ = 0;
  };

  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size_}; }
  bool empty() const { return size_ == 0; }
  const Entry& back() const { return at(size_ - 1); }
  long size() const { return size_; }

  const Entry& at(long i) const {
    // A search past the end only follows totals that do not add up.
    if (i < 0 || i >= size_) throw CommandError("corrupt value: sliding_log totals do not add up");
    auto it = cache_.find(i);
    if (it != cache_.end()) return it->second;
    if (read_at_ >= 0 && (i > read_at_ + kNear || i < read_at_ - kNear)) reopen();
    RedisModuleString* raw = api.ListGet(key_, i);
    read_at_ = i;
    if (!raw) throw CommandError("corrupt value: a sliding_log entry cannot be read");
    size_t len = 0;
    const char* p = api.StringPtrLen(raw, &len);
    Entry e;
    try {
      e = unpack(p, len);
    } catch (...) {
      api.FreeString(ctx_, raw);
      throw;
    }
    api.FreeString(ctx_, raw);
    return cache_.emplace(i, e).first->second;
  }

  // After a write: what was read may have moved; the list calls that
  // write drop ListGet's iterator.
  void changed(long size) {
    size_ = size;
    cache_.clear();
    read_at_ = -1;
  }

 private:
  // A walk of this many entries costs about what a reopen and a fresh seek do.
  static constexpr long kNear = 16;

  void reopen() const {
    api.CloseKey(key_);
    key_ = api.OpenKey(ctx_, name_, mode_);
    if (!key_) throw CommandError("the sliding_log key cannot be opened again");
    read_at_ = -1;
  }

  RedisModuleCtx* ctx_;
  RedisModuleKey*& key_;
  RedisModuleString* name_;
  int mode_;
  long size_;
  mutable long read_at_ = -1;  // where ListGet's iterator is, -1 when it has none
  mutable std::unordered_map<long, Entry> cache_;
};

// decide.h's Algo over the shared log: deciding reads it; recording is
// record() below, once for every limit.
struct SharedLog {
  using State = ListView*;
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
    return SlidingLog::decide_in(*s, r, now, cost);
  }
  static void consume(State&, const Rate&, int64_t, int64_t) {}
  static void refund(State&, const Rate&, int64_t, int64_t) {}
};

int64_t longest(const std::vector<Rate>& rates) {
  int64_t w = 0;
  for (const Rate& r : rates) w = std::max(w, r.window_us);
  return w;
}

// The index of the first entry live for a window of `window` us.
long first_live(const ListView& log, int64_t window, int64_t now) {
  return SlidingLog::search_from_front(log.begin(), log.end(),
                                       [&](const Entry& e) { return now - e.at >= window; })
      .index();
}

class Writer {
 public:
  Writer(RedisModuleCtx* ctx, RedisModuleKey*& key, RedisModuleString* name, ListView& log,
         BatchEffects& effects)
      : ctx_(ctx), key_(key), name_(name), log_(log), effects_(effects) {}

  void del() {
    if (log_.size() == 0) return;
    // Redis 7.0 keeps ListGet's iterator on the handle and frees it at the
    // next list call or at CloseKey, even after DeleteKey freed the list: a
    // pop first frees it (and deletes the key when it was the last entry).
    RedisModuleString* s = api.ListPop(key_, kListTail);
    if (s) api.FreeString(ctx_, s);
    api.DeleteKey(key_);
    effects_.remove(name_);
    announce(kNotifyGeneric, "del");
    log_.changed(0);
  }
  // Drops the `dead` oldest entries (LTRIM dead -1), or the key when all are.
  void trim(long dead) {
    if (dead == 0) return;
    if (dead >= log_.size()) return del();
    for (long i = 0; i < dead; ++i) {
      RedisModuleString* s = api.ListPop(key_, kListHead);
      if (s) api.FreeString(ctx_, s);
    }
    effects_.trim(name_, dead);
    announce(kNotifyList, "ltrim");
    log_.changed(log_.size() - dead);
  }
  void set_newest(const Entry& e) {
    const std::string raw = pack(e);
    RedisModuleString* s = api.CreateString(ctx_, raw.data(), raw.size());
    api.ListSet(key_, -1, s);
    effects_.set_newest(name_, s);
    announce(kNotifyList, "lset");
    log_.changed(log_.size());
  }
  void push(const Entry& e) {
    const std::string raw = pack(e);
    RedisModuleString* s = api.CreateString(ctx_, raw.data(), raw.size());
    api.ListPush(key_, kListTail, s);
    effects_.push(name_, s);
    announce(kNotifyList, "rpush");
    log_.changed(log_.size() + 1);
  }
  void pop_newest() {
    RedisModuleString* s = api.ListPop(key_, kListTail);
    if (s) api.FreeString(ctx_, s);
    effects_.pop_newest(name_);
    announce(kNotifyList, "rpop");
    if (log_.size() == 1)
      announce(kNotifyGeneric, "del");  // RPOP of the last entry deletes the key
    log_.changed(log_.size() - 1);
  }
  // Every entry again with totals from 0 (lua rebase): once per 2^51 units.
  void rebase() {
    const long n = log_.size();
    std::vector<Entry> all;
    all.reserve(static_cast<size_t>(n));
    for (long i = 0; i < n; ++i) all.push_back(log_.at(i));
    const int64_t before = all.front().total - all.front().cost;
    del();
    for (Entry& e : all) {
      e.total -= before;
      push(e);
    }
  }
  // The key lives until its newest entry leaves the longest window.
  void expire(int64_t idle, int64_t now, int64_t min_ttl_ms) {
    if (log_.size() == 0) return;
    Write w;
    set_expiry(w, idle, now, min_ttl_ms);
    long long at = w.expire_at_ms;
    if (w.ttl_ms == 0) {
      api.SetAbsExpire(key_, at);
    } else {
      api.SetExpire(key_, w.ttl_ms);
      at = api.GetAbsExpire(key_);
    }
    effects_.expire_at(name_, at);
    if (effects_.may_expire_now(at)) effects_.flush();
    announce(kNotifyGeneric, "expire");
  }

 private:
  // The keyspace event Redis sends for the command replicated (the module
  // API's list calls send none themselves).
  void announce(int type, const char* event) { api.NotifyKeyspaceEvent(ctx_, type, event, name_); }

  RedisModuleCtx* ctx_;
  RedisModuleKey*& key_;
  RedisModuleString* name_;
  ListView& log_;
  BatchEffects& effects_;
};

// lua record_at(): after an admitted acquire (at = now) or a lease's grant
// (at = the lease's end); returns the instant the units went to.
int64_t record(Writer& w, ListView& log, const Request& q, int64_t now, int64_t at) {
  const int64_t window = longest(q.rates);
  const long dead = first_live(log, window, now);
  // As lua acquire_one: a one-limit acquire whose newest entry is live and
  // holds every unit of the log (older entries hold none) reads nothing
  // older, so trims nothing; otherwise every dead entry goes.
  const bool untouched =
      q.rates.size() == 1 && dead < log.size() && log.back().total == log.back().cost;
  if (!untouched) w.trim(dead);
  int64_t total = q.cost;
  if (log.size() > 0) {
    const Entry last = log.back();
    total = last.total + q.cost;
    if (last.at >= at) {
      w.set_newest({last.at, last.cost + q.cost, total});
    } else {
      w.push({at, q.cost, total});
    }
  } else {
    w.push({at, q.cost, total});
  }
  const int64_t stamped = log.back().at;
  if (total >= kRebaseAt) w.rebase();
  w.expire(log.back().at + window, now, q.min_ttl_ms);
  return stamped;
}

// lua release(): a lease's unused units off its record (at the tag) when it
// is among the newest SlidingLog::kReleaseReach entries; the entries from
// it on are written again, their running totals less the units.
bool release(Writer& w, ListView& log, const Request& q, int64_t now) {
  w.trim(first_live(log, longest(q.rates), now));
  const int64_t units = q.cost;
  const int64_t tag = q.lease.granted_at;
  if (units <= 0) return false;
  const long n = log.size();
  const long lowest = std::max<long>(0, n - SlidingLog::kReleaseReach);
  long i = n - 1;
  while (i >= lowest && log.at(i).at > tag) --i;
  if (i < lowest || log.at(i).at != tag) return false;
  const int64_t taken = std::min(units, log.at(i).cost);
  std::vector<Entry> again;
  for (long j = i; j < n; ++j) {
    Entry e = log.at(j);
    if (j == i) e.cost -= taken;
    e.total -= taken;
    if (e.cost > 0) again.push_back(e);
  }
  for (long j = i; j < n; ++j) w.pop_newest();
  for (const Entry& e : again) w.push(e);
  if (log.size() > 0) w.expire(log.back().at + longest(q.rates), now, q.min_ttl_ms);
  return true;
}

// Leases (lua lease_ahead): a grant records the slice at its lease's end,
// its tag that record's instant; a release takes its unused units off it.
Reply lease_ahead(Writer& w, ListView& log, const Request& q, int64_t now) {
  const Rate& r = q.rates[0];
  Verdict v;
  int64_t tag = 0;
  if (q.op == Op::release) {
    tag = release(w, log, q, now) ? 1 : 0;
    v = SlidingLog::decide_in(log, r, now, 0);
  } else {
    v = SlidingLog::decide_in(log, r, now, q.cost);
    if (v.allowed && q.lease.hold_us > 0) {
      tag = record(w, log, q, now, now + q.lease.hold_us);
      v.reset_after_us = tag + r.window_us - now;  // the record leaves then
    } else {
      const int64_t retry = v.allowed ? 0 : v.retry_after_us;
      v = SlidingLog::decide_in(log, r, now, 0);
      v.allowed = false;
      v.retry_after_us = retry;
    }
  }
  Reply out = reply_of(v, 7);
  out.values[6] = tag;
  return out;
}

// lua give_back(): the newest units first.
void give_back(Writer& w, ListView& log, const Request& q, int64_t now) {
  const int64_t window = longest(q.rates);
  w.trim(first_live(log, window, now));
  int64_t cost = q.cost;
  // Never from an entry stamped after now: a lease's record (lua give_back).
  while (cost > 0 && log.size() > 0 && log.back().at <= now) {
    const Entry newest = log.back();
    const int64_t taken = std::min(cost, newest.cost);
    cost -= taken;
    if (taken == newest.cost) {
      w.pop_newest();
    } else {
      w.set_newest({newest.at, newest.cost - taken, newest.total - taken});
    }
  }
  if (log.size() > 0) w.expire(log.back().at + window, now, q.min_ttl_ms);
}

}  // namespace

Reply run_sliding_log(RedisModuleCtx* ctx, RedisModuleKey*& key, RedisModuleString* name, int mode,
                      const Request& q, int64_t now, BatchEffects& effects) {
  ListView log(ctx, key, name, mode, static_cast<long>(api.ValueLength(key)));
  Writer w(ctx, key, name, log, effects);
  const size_t n = q.rates.size();
  if (q.op == Op::lease || q.op == Op::release) return lease_ahead(w, log, q, now);
  if (q.op == Op::refund || q.op == Op::reset) {
    if (q.op == Op::reset) {
      w.del();
    } else {
      give_back(w, log, q, now);
    }
    Fold after;
    for (size_t i = 0; i < n; ++i) after.add(SlidingLog::decide_in(log, q.rates[i], now, 0));
    return reply_of(after.result(), 6);
  }
  // acquire and peek: decide.h's apply, every limit on the one shared log;
  // an admitted acquire records once (lua record()), for all of them.
  std::vector<ListView*> states(n, &log);
  bool changed = false;
  const Verdict v = apply<SharedLog>(q.op, std::span(states), q.rates, now, q.cost, changed);
  if (!changed) return reply_of(v, 6);
  record(w, log, q, now, now);
  if (n > 1) return reply_of(v, 6);
  Reply r = reply_of(v, 7);
  if (v.remaining < q.cost) {
    const Verdict again = SlidingLog::decide_in(log, q.rates[0], now, q.cost);
    r.values[6] = again.allowed ? 0 : again.retry_after_us;
  }
  return r;
}

}  // namespace rl::module
