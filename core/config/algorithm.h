// The algorithms a limiter decides with (the algorithm setting).
#pragma once

#include <string>
#include <string_view>

#include "error.h"
#include "quote.h"

namespace rl {

enum class Algorithm { gcra, token_bucket, sliding_log, sliding_window, fixed_window, suppressed };

inline const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::gcra: return "gcra";
    case Algorithm::token_bucket: return "token_bucket";
    case Algorithm::sliding_log: return "sliding_log";
    case Algorithm::sliding_window: return "sliding_window";
    case Algorithm::fixed_window: return "fixed_window";
    case Algorithm::suppressed: return "suppressed";
  }
  return "?";
}

// Every algorithm's name, comma-separated: the algorithm setting's choices
// (rl_setting_describe); settings_table_test checks it against the enum.
inline constexpr const char kAlgorithmChoices[] =
    "gcra,token_bucket,sliding_log,sliding_window,fixed_window,suppressed";

inline Algorithm parse_algorithm(std::string_view text) {
  for (Algorithm a : {Algorithm::gcra, Algorithm::token_bucket, Algorithm::sliding_log,
                      Algorithm::sliding_window, Algorithm::fixed_window, Algorithm::suppressed}) {
    if (text == algorithm_name(a)) return a;
  }
  fail_invalid("algorithm: " + quote(text) +
               " is unknown; use gcra, token_bucket, sliding_log, sliding_window, fixed_window or "
               "suppressed");
}

}  // namespace rl
