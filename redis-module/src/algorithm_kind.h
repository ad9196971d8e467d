// The algorithms by name, without core/config/algorithm.h's error helpers
// (which pull in the core's quoting): the module names its own errors.
#pragma once

#include <string_view>

namespace rl::module {

enum class AlgorithmKind {
  gcra,
  token_bucket,
  sliding_log,
  sliding_window,
  fixed_window,
  suppressed
};

inline constexpr AlgorithmKind kAlgorithms[] = {
    AlgorithmKind::gcra,           AlgorithmKind::token_bucket, AlgorithmKind::sliding_log,
    AlgorithmKind::sliding_window, AlgorithmKind::fixed_window, AlgorithmKind::suppressed};

inline constexpr std::string_view algorithm_kind_name(AlgorithmKind a) {
  switch (a) {
    case AlgorithmKind::gcra: return "gcra";
    case AlgorithmKind::token_bucket: return "token_bucket";
    case AlgorithmKind::sliding_log: return "sliding_log";
    case AlgorithmKind::sliding_window: return "sliding_window";
    case AlgorithmKind::fixed_window: return "fixed_window";
    case AlgorithmKind::suppressed: return "suppressed";
  }
  return "?";
}

}  // namespace rl::module
