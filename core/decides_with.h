// What decides in Redis for a store (script_mode, docs/redis-module.md):
// the setting, what rl's Lua code goes as, and under script_mode=auto how
// many nodes were seen with the module and without. One fact behind
// rl_store_describe (rl_store_info version 2) and the rl_store_decides_with
// metric.
#pragma once

#include <cstdint>
#include <string>

namespace rl {

struct DecidesWith {
  // "auto", "module", "functions" or "scripts" (static storage); nullptr for
  // memory://, where nothing decides in Redis.
  const char* script_mode = nullptr;
  // What the Lua code goes as: "functions" (FCALL), or "scripts" (EVALSHA)
  // once a server or user without Functions was met. Static storage.
  const char* lua = nullptr;
  // script_mode=auto only: the nodes seen so far deciding with the module,
  // and with the Lua code, each by its latest answer (a node found without
  // the module is asked again once its connection is made again). 0
  // otherwise.
  uint32_t module_nodes = 0;
  uint32_t lua_nodes = 0;
};

// "module", "functions", "scripts", or "auto (module on 1 of 2 nodes seen,
// else functions)"; empty for memory://.
std::string decides_with_text(const DecidesWith& d);

}  // namespace rl
