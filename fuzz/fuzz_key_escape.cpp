// rl::redis::escape_key, the user key inside a Redis key's hash tag: the
// output holds no brace and no byte a Redis key or log line would mangle,
// decoding it gives back the input (so distinct keys never share a Redis
// key), and it is at most three bytes per input byte.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_check.h"
#include "redis/key_schema.h"

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // escape_key writes upper-case hex only
}

// The inverse of escape_key; nullopt for text it could not have written.
std::optional<std::string> unescape_key(std::string_view escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '%') {
      out += escaped[i];
      continue;
    }
    if (i + 2 >= escaped.size()) return std::nullopt;
    const int high = hex_digit(escaped[i + 1]);
    const int low = hex_digit(escaped[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view key(reinterpret_cast<const char*>(data), size);
  const std::string escaped = rl::redis::escape_key(key);
  using rl_fuzz::check;

  check(escaped.size() <= 3 * key.size(), "escaped key longer than 3 bytes per input byte",
        escaped);
  for (const char c : escaped) {
    const auto byte = static_cast<unsigned char>(c);
    check(c != '{' && c != '}', "escaped key holds a brace", escaped);
    check(byte > ' ' && byte < 0x7f, "escaped key holds a byte outside '!'..'~'", escaped);
  }
  const std::optional<std::string> decoded = unescape_key(escaped);
  check(decoded.has_value(), "escaped key is not well-formed %XX text", escaped);
  check(*decoded == key, "decoding the escaped key does not give the key back", escaped);
  return 0;
}
