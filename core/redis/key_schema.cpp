#include "key_schema.h"

namespace rl::redis {

std::string escape_key(std::string_view user_key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(user_key.size());
  for (const char c : user_key) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte > ' ' && byte < 0x7f && c != '%' && c != '{' && c != '}') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

std::string key_suffix(const Policy& policy) {
  // Appended piece by piece: GCC 12 at -O2 warns (-Wrestrict, a false
  // positive) on "literal" + std::string chains.
  std::string suffix = "v";
  suffix += std::to_string(key_schema_version(policy.algorithm));
  suffix += ':';
  suffix += algorithm_name(policy.algorithm);
  suffix += ':';
  for (size_t i = 0; i < policy.rates.size(); ++i) {
    const Rate& r = policy.rates[i];
    if (i > 0) suffix += ',';
    suffix += r.to_string();
    if (r.burst != r.limit) {
      suffix += 'b';
      suffix += std::to_string(r.burst);
    }
    if (r.granularity_us != 0 && r.granularity_us != r.window_us) {
      suffix += 'g';
      suffix += std::to_string(r.granularity_us);
    }
  }
  return suffix;
}

KeyShape key_shape(std::string_view prefix, const Policy& policy) {
  std::string head(prefix);
  head += ':';
  head += policy.name;
  head += ":{";
  std::string tail = "}:";
  tail += key_suffix(policy);
  return KeyShape{std::move(head), std::move(tail)};
}

}  // namespace rl::redis
