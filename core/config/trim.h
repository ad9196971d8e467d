// Surrounding white space off a list item ("10/s, 1000/h", "20, 5000").
#pragma once

#include <cctype>
#include <string_view>

namespace rl {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace rl
