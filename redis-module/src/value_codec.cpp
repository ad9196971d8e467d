#include "value_codec.h"

#include <charconv>

#include "clock.h"
#include "command_error.h"
#include "request.h"

namespace rl::module {
namespace {

constexpr int64_t kTwo53 = int64_t{1} << 53;

// The value's integers, read one at a time.
class Numbers {
 public:
  explicit Numbers(std::string_view text) : text_(text) {}
  bool done() const { return at_ >= text_.size() && started_; }
  bool more() const { return at_ < text_.size(); }

  // The next integer, within [min, max]; `what` names it in the error.
  int64_t next(const char* what, int64_t min, int64_t max) {
    started_ = true;
    if (at_ >= text_.size()) corrupt(std::string(what) + " is missing");
    size_t end = text_.find(' ', at_);
    if (end == std::string_view::npos) end = text_.size();
    int64_t v = 0;
    if (!parse_int(text_.substr(at_, end - at_), v)) corrupt(std::string(what) + " is no integer");
    if (v < min || v > max) corrupt(std::string(what) + " is out of range");
    at_ = end == text_.size() ? end : end + 1;
    if (end + 1 == text_.size()) corrupt("it ends with a space");
    return v;
  }

  // How many integers are left (spaces + 1), for the one-limit packings.
  size_t left() const {
    if (at_ >= text_.size()) return 0;
    size_t n = 1;
    for (size_t i = at_; i < text_.size(); ++i) n += text_[i] == ' ';
    return n;
  }

  [[noreturn]] static void corrupt(const std::string& why) {
    throw CommandError("corrupt value: " + why);
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
  bool started_ = false;
};

void put(std::string& out, int64_t v) {
  if (!out.empty()) out += ' ';
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// The largest window or sub-window index of a time below 2^53 us: any
// larger one is no state rl wrote, and index * width would overflow.
int64_t last_index(int64_t width) {
  return kTwo53 / width;
}

// The one-limit fixed_window packing applies (lua packs()).
bool packs(int64_t window, const Rate& r) {
  return int128{window + 2} * (r.limit + 1) < kTwo53;
}

// Token bucket levels fit one number (lua narrow()).
bool narrow(const Rate& r) {
  return int128{r.burst} * r.window_reduced <= (int64_t{1} << 52);
}

// A leased gcra or token_bucket state's holds, after its own integers (one
// limit: "leased_at period gen held_new held_old"; lua: common.lua save).
constexpr size_t kHoldIntegers = 5;

void decode_hold(Numbers& n, HeldUnits& hold) {
  LeaseHold& h = hold.make();
  h.leased_at = n.next("hold leased_at", 0, kTwo53);
  h.period_us = n.next("hold period", 1, kMaxTime);
  h.gen = n.next("hold generation", 0, kTwo53);
  h.held_new = n.next("hold held_new", 0, kMaxLimit);
  h.held_old = n.next("hold held_old", 0, kMaxLimit);
}
void encode_hold(const HeldUnits& hold, std::string& out) {
  put(out, hold->leased_at);
  put(out, hold->period_us);
  put(out, hold->gen);
  put(out, hold->held_new);
  put(out, hold->held_old);
}

void decode_one(Numbers& n, const Rate& r, bool alone, Gcra::State& s) {
  const size_t left = n.left();
  s.tat = n.next("gcra tat", 0, kTwo53);
  s.frac = alone && left == 1 ? 0 : n.next("gcra frac", 0, r.limit_reduced - 1);
  if (alone && left == 2 + kHoldIntegers) decode_hold(n, s.hold);
}
void encode_one(const Gcra::State& s, const Rate&, bool alone, std::string& out) {
  put(out, s.tat);
  const bool held = alone && s.hold;
  if (s.frac != 0 || !alone || held) put(out, s.frac);
  if (held) encode_hold(s.hold, out);
}

void decode_one(Numbers& n, const Rate& r, bool alone, FixedWindow::State& s) {
  if (alone && n.left() == 3) {  // window count leased_at (lua: common.lua save)
    s.window = n.next("fixed_window window", 0, last_index(r.window_us));
    s.count = n.next("fixed_window count", 0, kMaxLimit);
    s.leased_at = n.next("fixed_window leased_at", 0, kTwo53);
    return;
  }
  if (alone && n.left() == 1) {
    const int64_t v = n.next("fixed_window value", 0, kTwo53);
    s.window = v / (r.limit + 1);
    s.count = v % (r.limit + 1);
    if (s.window > last_index(r.window_us)) Numbers::corrupt("fixed_window window is out of range");
    return;
  }
  s.window = n.next("fixed_window window", 0, last_index(r.window_us));
  s.count = n.next("fixed_window count", 0, kMaxLimit);
}
void encode_one(const FixedWindow::State& s, const Rate& r, bool alone, std::string& out) {
  // An empty state (window -1 in the core, 0 in Lua) is written as Lua's.
  const int64_t window = s.window < 0 ? 0 : s.window;
  if (alone && s.leased_at < 0 && packs(window, r)) {
    put(out, window * (r.limit + 1) + s.count);
  } else {
    put(out, window);
    put(out, s.count);
  }
  if (alone && s.leased_at >= 0) put(out, s.leased_at);
}

void decode_one(Numbers& n, const Rate& r, bool alone, TokenBucket::State& s) {
  const bool held = alone && n.left() == (narrow(r) ? 2 : 3) + kHoldIntegers;
  const int128 capacity = int128{r.burst} * r.window_reduced;
  if (narrow(r)) {
    s.level = n.next("token_bucket level", 0, static_cast<int64_t>(capacity));
  } else {
    const int64_t tokens = n.next("token_bucket tokens", 0, r.burst);
    const int64_t part = n.next("token_bucket part", 0, r.window_reduced - 1);
    s.level = int128{tokens} * r.window_reduced + part;
    if (s.level > capacity) Numbers::corrupt("token_bucket level is above the burst");
  }
  s.at = n.next("token_bucket at", 0, kTwo53);
  s.used = true;
  if (held) decode_hold(n, s.hold);
}
void encode_one(const TokenBucket::State& s, const Rate& r, bool alone, std::string& out) {
  if (narrow(r)) {
    put(out, static_cast<int64_t>(s.level));
  } else {
    put(out, static_cast<int64_t>(s.level / r.window_reduced));
    put(out, static_cast<int64_t>(s.level % r.window_reduced));
  }
  put(out, s.at);
  if (alone && s.hold) encode_hold(s.hold, out);
}

void decode_one(Numbers& n, const Rate& r, bool alone, SlidingWindow::State& s) {
  const int64_t count = n.next("sliding_window count", 0, r.window_us / r.granularity_us + 2);
  int64_t last = -1;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = n.next("sliding_window index", last + 1, last_index(r.granularity_us));
    const int64_t c = n.next("sliding_window counter", 0, kMaxLimit);
    s.buckets.push_back({index, c});
    last = index;
  }
  if (alone && n.more()) s.leased_at = n.next("sliding_window leased_at", 0, kTwo53);
}
void encode_one(const SlidingWindow::State& s, const Rate&, bool alone, std::string& out) {
  put(out, static_cast<int64_t>(s.buckets.size()));
  for (const auto& b : s.buckets) {
    put(out, b.index);
    put(out, b.count);
  }
  if (alone && s.leased_at >= 0) put(out, s.leased_at);
}

void decode_one(Numbers& n, const Rate& r, bool, Suppressed::State& s) {
  s.factor_until = n.next("suppressed factor_until", 0, kTwo53);
  s.base = n.next("suppressed base", 0, Suppressed::kScale);
  const int64_t count = n.next("suppressed count", 0, r.window_us / r.granularity_us + 2);
  int64_t last = -1;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = n.next("suppressed index", last + 1, last_index(r.granularity_us));
    const int64_t total = n.next("suppressed total", 0, kMaxLimit);
    const int64_t accepted = n.next("suppressed accepted", 0, total);
    s.buckets.push_back({index, total, accepted});
    last = index;
  }
}
void encode_one(const Suppressed::State& s, const Rate&, bool, std::string& out) {
  put(out, s.factor_until);
  put(out, s.base);
  put(out, static_cast<int64_t>(s.buckets.size()));
  for (const auto& b : s.buckets) {
    put(out, b.index);
    put(out, b.total);
    put(out, b.accepted);
  }
}

}  // namespace

template <class Algo>
void decode_value(std::string_view value, const std::vector<Rate>& rates,
                  std::vector<typename Algo::State>& states) {
  if (value.size() > kMaxValueBytes) Numbers::corrupt("larger than 1 MiB");
  Numbers n(value);
  const bool alone = rates.size() == 1;
  reset_states(states, rates.size());
  for (size_t i = 0; i < rates.size(); ++i) decode_one(n, rates[i], alone, states[i]);
  if (n.more()) Numbers::corrupt("integers left over after every limit's state");
}

template <class Algo>
void encode_value(const std::vector<typename Algo::State>& states, const std::vector<Rate>& rates,
                  std::string& out) {
  const bool alone = rates.size() == 1;
  for (size_t i = 0; i < rates.size(); ++i) encode_one(states[i], rates[i], alone, out);
}

#define RL_CODEC(Algo)                                                                        \
  template void decode_value<Algo>(std::string_view, const std::vector<Rate>&,                \
                                   std::vector<Algo::State>&);                                \
  template void encode_value<Algo>(const std::vector<Algo::State>&, const std::vector<Rate>&, \
                                   std::string&);
RL_CODEC(Gcra)
RL_CODEC(FixedWindow)
RL_CODEC(TokenBucket)
RL_CODEC(SlidingWindow)
RL_CODEC(Suppressed)
#undef RL_CODEC

}  // namespace rl::module
