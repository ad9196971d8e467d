#include "decision.h"

#include <algorithm>
#include <vector>

#include "algorithms/fixed_window.h"
#include "algorithms/gcra.h"
#include "algorithms/sliding_window.h"
#include "algorithms/suppressed.h"
#include "algorithms/token_bucket.h"
#include "value_codec.h"

namespace rl::module {
namespace {

// After an admitted acquire with one limit: how long until another of the
// same cost would be admitted (0 while remaining covers it; lua
// next_retry), for the client's denied-key cache.
template <class Algo>
int64_t next_retry(const typename Algo::State& after, const Rate& r, int64_t now, int64_t cost,
                   int64_t remaining) {
  if (remaining >= cost) return 0;
  const Verdict again = Algo::decide(after, r, now, cost);
  return again.allowed ? 0 : again.retry_after_us;
}

template <class Algo>
void save(Write& w, const std::vector<typename Algo::State>& states, const Request& q,
          int64_t now) {
  int64_t idle = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    idle = std::max(idle, Algo::idle_at(states[i], q.rates[i]));
  }
  if (idle <= now) {
    w.kind = Write::Kind::remove;
    return;
  }
  w.kind = Write::Kind::set;
  encode_value<Algo>(states, q.rates, w.value);
  set_expiry(w, idle, now, q.min_ttl_ms);
}

// The states of one decision, kept from call to call: the server runs one
// command at a time, and a vector that keeps its capacity allocates nothing.
template <class State>
std::vector<State>& states_buffer() {
  static std::vector<State> states;
  return states;
}

template <class Algo>
void decide_with(const Request& q, std::optional<std::string_view> stored, int64_t now,
                 Decision& d) {
  std::vector<typename Algo::State>& states = states_buffer<typename Algo::State>();
  if (stored) {
    decode_value<Algo>(*stored, q.rates, states);
  } else {
    reset_states(states, q.rates.size());
  }
  bool changed = false;
  const Verdict v = apply<Algo>(q.op, std::span(states), q.rates, now, q.cost, changed, q.lease);
  const bool one = q.rates.size() == 1;
  if (q.op == Op::lease || q.op == Op::release) {
    // next_retry's place: the grant's time, or whether the units were taken
    // off (lua lease_call)
    d.reply = reply_of(v, 7);
    d.reply.values[6] = q.op == Op::release ? v.next_retry_after_us : v.allowed ? now : 0;
  } else if (one && q.op == Op::acquire && v.allowed) {
    d.reply = reply_of(v, 7);
    d.reply.values[6] = next_retry<Algo>(states[0], q.rates[0], now, q.cost, v.remaining);
  } else {
    d.reply = reply_of(v, 6);
  }
  if (changed) save<Algo>(d.write, states, q, now);
}

void decide_suppressed(const Request& q, std::optional<std::string_view> stored, int64_t now,
                       Decision& d) {
  std::vector<Suppressed::State>& states = states_buffer<Suppressed::State>();
  if (stored) {
    decode_value<Suppressed>(*stored, q.rates, states);
  } else {
    reset_states(states, q.rates.size());
  }
  bool changed = false;
  const Verdict v =
      Suppressed::apply(q.op, std::span(states), q.rates, now, q.cost, q.chance, changed);
  d.reply = reply_of(v, 8);
  d.reply.values[6] = 0;
  d.reply.values[7] = static_cast<int64_t>(v.suppression_factor * Suppressed::kScale + 0.5);
  if (changed) save<Suppressed>(d.write, states, q, now);
}

}  // namespace

Reply reply_of(const Verdict& v, int size) {
  Reply r;
  r.size = size;
  r.values[0] = v.allowed ? 1 : 0;
  r.values[1] = v.limit;
  r.values[2] = v.remaining;
  r.values[3] = v.retry_after_us;
  r.values[4] = v.reset_after_us;
  r.values[5] = v.limit_index;
  return r;
}

void set_expiry(Write& w, int64_t idle, int64_t now, int64_t min_ttl_ms) {
  if (min_ttl_ms == 0) {
    w.expire_at_ms = (idle + 999) / 1000;
    w.ttl_ms = 0;
  } else {
    w.ttl_ms = std::max((idle - now + 999) / 1000, min_ttl_ms);
  }
}

void decide_string(const Request& q, std::optional<std::string_view> stored, int64_t now,
                   Decision& d) {
  d.reply = Reply{};
  d.write.kind = Write::Kind::none;
  d.write.value.clear();  // keeps its capacity
  d.write.expire_at_ms = 0;
  d.write.ttl_ms = 0;
  switch (q.algorithm) {
    case AlgorithmKind::gcra: return decide_with<Gcra>(q, stored, now, d);
    case AlgorithmKind::token_bucket: return decide_with<TokenBucket>(q, stored, now, d);
    case AlgorithmKind::fixed_window: return decide_with<FixedWindow>(q, stored, now, d);
    case AlgorithmKind::sliding_window: return decide_with<SlidingWindow>(q, stored, now, d);
    case AlgorithmKind::suppressed: return decide_suppressed(q, stored, now, d);
    case AlgorithmKind::sliding_log: break;
  }
}

Decision decide_string(const Request& q, std::optional<std::string_view> stored, int64_t now) {
  Decision d;
  decide_string(q, stored, now, d);
  return d;
}

}  // namespace rl::module
