// Which failures are an outage of the store: the one rule the failure
// policy, the circuit breaker and every binding (rl_status_is_outage) use.
#pragma once

#include "error.h"

namespace rl {

// The store could not be reached or did not answer in time. Bad input, a
// refused password, a script error and a closed store are not outages: the
// store answered, or the caller is at fault, and no fallback may hide them.
constexpr bool is_outage(Code code) {
  return code == Code::backend_unavailable || code == Code::timeout;
}

}  // namespace rl
