// The stored value of every algorithm but sliding_log, exactly as the Lua
// path writes and reads it (docs/key-schema.md, lua/algorithms/*.lua): the
// integers of each limit's state, space-separated, with the one-limit
// packings of key schema v3 (gcra: `tat` alone while frac is 0;
// fixed_window: window * (limit + 1) + count while it stays below 2^53).
// A value that does not parse, or holds a state outside what rl ever
// writes, is corrupt: decoding throws CommandError, never reads past it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algorithms/fixed_window.h"
#include "algorithms/gcra.h"
#include "algorithms/sliding_window.h"
#include "algorithms/suppressed.h"
#include "algorithms/token_bucket.h"

namespace rl::module {

// `n` empty states in `states`, made over the ones it holds: assigned from
// one blank state, their bucket deques keep their memory (a fresh deque
// allocates), so a decision on a vector kept from call to call allocates
// nothing for them.
template <class State>
void reset_states(std::vector<State>& states, size_t n) {
  static const State blank{};
  states.resize(n);
  for (State& s : states) s = blank;
}

// Reads a whole value: `states` gets one state per rate.
template <class Algo>
void decode_value(std::string_view value, const std::vector<Rate>& rates,
                  std::vector<typename Algo::State>& states);

// Appends the value of `states` (one per rate) to `out`.
template <class Algo>
void encode_value(const std::vector<typename Algo::State>& states, const std::vector<Rate>& rates,
                  std::string& out);

}  // namespace rl::module
