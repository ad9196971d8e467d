// One limiter's backend behind the failure policy: calls go through the
// store's circuit breaker; an outage (or a breaker that refuses the call)
// gives what the limiter's on_failure says.
#pragma once

#include <memory>

#include "failover_store.h"
#include "store.h"

namespace rl {

std::shared_ptr<Backend> failover_backend(std::shared_ptr<FailoverStore> store,
                                          std::shared_ptr<Backend> inner, const Policy& policy);

}  // namespace rl
