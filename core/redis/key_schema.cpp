#include "key_schema.h"

namespace rl::redis {

namespace {

bool needs_escape(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte <= ' ' || byte >= 0x7f || c == '%' || c == '{' || c == '}';
}

// Appends to `out`, which has room for it.
void append_escaped_in_place(std::string& out, std::string_view user_key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : user_key) {
    if (!needs_escape(c)) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
}

size_t escaped_size(std::string_view user_key) {
  size_t size = user_key.size();
  for (const char c : user_key) size += needs_escape(c) ? 2 : 0;
  return size;
}

}  // namespace

std::string escape_key(std::string_view user_key) {
  std::string out;
  out.reserve(escaped_size(user_key));
  append_escaped_in_place(out, user_key);
  return out;
}

std::string KeyShape::key_for(std::string_view user_key) const {
  std::string key;
  key.reserve(head.size() + escaped_size(user_key) + tail.size());
  key += head;
  append_escaped_in_place(key, user_key);
  key += tail;
  return key;
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
