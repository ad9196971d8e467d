#include "url_display.h"

#include "error.h"
#include "settings.h"
#include "url.h"

namespace rl {
namespace {

constexpr std::string_view kHidden = "***";

// Escapes what parse_url would read as structure (and any byte outside
// printable ASCII), so the display form reads back as the same URL.
std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == ',' ||
                       c == ':' || c == '*';
    if (plain) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

// A query value is shown only when it belongs to a known setting that is
// no credential: a key rl does not know may be anything, a password too.
bool shows_value_of(std::string_view key) {
  const SettingInfo* info = find_setting(key);
  return info != nullptr && !info->secret;
}

}  // namespace

std::string display_url(const Url& url) {
  std::string out = url.scheme + "://";
  if (!url.password.empty()) {
    // The user is who connects, not a secret: shown, as redis-cli shows it.
    if (!url.user.empty()) out += percent_encode(url.user) + ":";
    out += std::string(kHidden) + "@";
  }
  for (size_t i = 0; i < url.endpoints.size(); ++i) {
    const Endpoint& e = url.endpoints[i];
    if (i > 0) out += ',';
    const bool ipv6 = e.host.find(':') != std::string::npos;
    out += ipv6 ? "[" + e.host + "]" : e.host;
    out += ":" + std::to_string(e.port);
  }
  if (!url.path.empty()) out += "/" + url.path;
  for (size_t i = 0; i < url.query.size(); ++i) {
    const auto& [key, value] = url.query[i];
    out += i == 0 ? '?' : '&';
    out += percent_encode(key) + "=";
    out += shows_value_of(key) ? percent_encode(value) : std::string(kHidden);
  }
  return out;
}

std::string display_url(std::string_view text) {
  try {
    return display_url(parse_store_url(text));
  } catch (const Error&) {
    const size_t scheme_end = text.find("://");
    if (scheme_end != std::string_view::npos && is_url_scheme(text.substr(0, scheme_end))) {
      return std::string(text.substr(0, scheme_end)) + "://" + std::string(kHidden);
    }
    return std::string(kHidden);
  }
}

}  // namespace rl
