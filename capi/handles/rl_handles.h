// Owning C++ handles for the C ABI's objects, so that every path frees them.
// Internal: shared by rl's own C++ consumers of rl.h (the conformance runner
// and the unit tests); not installed.
#pragma once

#include <rl/rl.h>

#include <memory>

namespace rl_handles {

struct StoreFree {
  void operator()(rl_store* s) const { rl_store_free(s); }
};
struct LimiterFree {
  void operator()(rl_limiter* l) const { rl_limiter_free(l); }
};
struct ConfigFree {
  void operator()(rl_config* c) const { rl_config_free(c); }
};
struct ErrorFree {
  void operator()(rl_error* e) const { rl_error_free(e); }
};
struct WaitFree {
  void operator()(rl_wait* w) const { rl_wait_free(w); }
};

using Store = std::unique_ptr<rl_store, StoreFree>;
using Limiter = std::unique_ptr<rl_limiter, LimiterFree>;
using Config = std::unique_ptr<rl_config, ConfigFree>;
using Error = std::unique_ptr<rl_error, ErrorFree>;
using Wait = std::unique_ptr<rl_wait, WaitFree>;

}  // namespace rl_handles
