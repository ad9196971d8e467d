#include "decides_with.h"

#include <string_view>

namespace rl {

std::string decides_with_text(const DecidesWith& d) {
  if (d.script_mode == nullptr) return {};
  const std::string_view mode = d.script_mode;
  if (mode == "module") return "module";
  if (mode != "auto") return d.lua;
  return "auto (module on " + std::to_string(d.module_nodes) + " of " +
         std::to_string(d.module_nodes + d.lua_nodes) + " nodes seen, else " + d.lua + ")";
}

}  // namespace rl
