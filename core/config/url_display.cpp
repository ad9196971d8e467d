#include "url_display.h"

#include "error.h"
#include "settings.h"
#include "url.h"

namespace rl {
namespace {

constexpr std::string_view kHidden = "***";

void append_escaped(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += '%';
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

// Escapes what parse_url would read as structure (and any byte outside
// printable ASCII), so the display form reads back as the same URL.
std::string percent_encode(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == ',' ||
                       c == ':' || c == '*';
    if (plain) {
      out += c;
    } else {
      append_escaped(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

// Text parse_url keeps as it was written (the path, query keys): as it is,
// but with bytes outside printable ASCII escaped, so the form is one line.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte > 0x20 && byte < 0x7f) {
      out += c;
    } else {
      append_escaped(out, byte);
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
  if (!url.path.empty()) out += "/" + printable(url.path);
  for (size_t i = 0; i < url.query.size(); ++i) {
    const auto& [key, value] = url.query[i];
    out += i == 0 ? '?' : '&';
    out += printable(key) + "=";
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
