#include "quote.h"

namespace rl {

std::string quote(std::string_view text, size_t max_shown) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  size_t used = 0;  // input bytes shown
  for (unsigned char c : text) {
    const bool plain = c >= 0x20 && c < 0x7f && c != '\'' && c != '\\';
    // max_shown bounds what is shown, escapes included.
    if (out.size() - 1 + (plain ? 1 : 4) > max_shown) break;
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
    ++used;
  }
  if (used < text.size()) out += "...";
  out += "'";
  return out;
}

}  // namespace rl
