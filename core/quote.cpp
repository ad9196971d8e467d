#include "quote.h"

namespace rl {

std::string quote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const std::string_view shown = text.substr(0, kQuotedMax);
  for (unsigned char c : shown) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (shown.size() < text.size()) out += "...";
  out += "'";
  return out;
}

}  // namespace rl
