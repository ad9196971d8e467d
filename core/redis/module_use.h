// Whether a store decides through rl's Redis module (librl_redis.so,
// docs/redis-module.md) where a node has it: script_mode=auto (the module
// where loaded, the Lua library elsewhere), module (the module or an error),
// functions or scripts (never the module).
#pragma once

namespace rl::redis {

enum class ModuleUse { automatic, required, off };

inline const char* module_use_name(ModuleUse u) {
  switch (u) {
    case ModuleUse::automatic: return "auto";
    case ModuleUse::required: return "module";
    case ModuleUse::off: return "off";
  }
  return "?";
}

}  // namespace rl::redis
