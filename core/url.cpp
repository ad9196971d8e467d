#include "url.h"

#include "error.h"
#include "settings.h"

namespace rl {
namespace {

std::string percent_decode(std::string_view s, std::string_view text) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    auto hex = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
      fail_invalid("url: '" + std::string(text) + "' has a bad percent-escape");
    }
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

}  // namespace

Url parse_url(std::string_view text, int default_port) {
  Url url;
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) {
    fail_invalid("url: '" + std::string(text) +
                 "' has no scheme; expected memory:// or redis://host:port");
  }
  url.scheme = std::string(text.substr(0, scheme_end));
  std::string_view rest = text.substr(scheme_end + 3);

  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        fail_invalid("url: query item '" + std::string(pair) + "' is not key=value");
      }
      url.query.emplace_back(std::string(pair.substr(0, eq)),
                             percent_decode(pair.substr(eq + 1), text));
      query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
  }
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    url.path = std::string(rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      // "redis://secret@host": a lone credential is a password, as in redis-cli.
      url.password = percent_decode(userinfo, text);
    } else {
      url.user = percent_decode(userinfo.substr(0, colon), text);
      url.password = percent_decode(userinfo.substr(colon + 1), text);
    }
  }
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view hostport = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    Endpoint e{std::string(hostport), default_port};
    // "[::1]:6379" brackets an IPv6 address; otherwise the port follows the last ':'.
    const size_t bracket = hostport.find(']');
    const size_t colon = hostport.rfind(':');
    const bool has_port =
        colon != std::string_view::npos &&
        (bracket == std::string_view::npos ? hostport.front() != '[' : colon > bracket);
    if (has_port) {
      e.host = std::string(hostport.substr(0, colon));
      e.port = static_cast<int>(parse_count("url port", hostport.substr(colon + 1), 1, 65535));
    }
    if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') {
      e.host = e.host.substr(1, e.host.size() - 2);
    }
    if (e.host.empty()) fail_invalid("url: '" + std::string(text) + "' has an empty host");
    url.endpoints.push_back(e);
  }
  return url;
}

}  // namespace rl
