#include "url.h"

#include <arpa/inet.h>

#include <cctype>

#include "error.h"
#include "quote.h"
#include "settings.h"

namespace rl {
namespace {

// Longest host name (RFC 1035) and most hosts in one URL.
constexpr size_t kMaxHostLength = 253;
constexpr size_t kMaxEndpoints = 64;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `part` names what is decoded ("the password"); the text itself is never
// quoted, since it may be a credential.
std::string percent_decode(std::string_view s, std::string_view part) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0) {
      fail_invalid("url: " + std::string(part) + " has a bad percent-escape (use %XX)");
    }
    out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
    i += 2;
  }
  return out;
}

bool is_host_name(std::string_view host) {
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Endpoint parse_endpoint(std::string_view hostport, int default_port) {
  if (hostport.empty()) fail_invalid("url: has an empty host (check for a stray ',')");
  Endpoint e{"", default_port};
  std::string_view host = hostport;
  std::string_view port;
  if (hostport.front() == '[') {
    // "[::1]:6379": brackets hold an IPv6 address; a port may follow.
    const size_t close = hostport.find(']');
    if (close == std::string_view::npos) {
      fail_invalid("url: host " + quote(hostport) + " opens '[' without a closing ']'");
    }
    host = hostport.substr(1, close - 1);
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      fail_invalid("url: host " + quote(hostport) + " has text after ']'");
    }
    if (!after.empty()) port = after.substr(1);
    in6_addr address;
    if (host.size() >= INET6_ADDRSTRLEN ||
        inet_pton(AF_INET6, std::string(host).c_str(), &address) != 1) {
      fail_invalid("url: host " + quote(hostport) + " is not an IPv6 address in brackets");
    }
  } else {
    const size_t colon = hostport.find(':');
    if (colon != std::string_view::npos) {
      if (hostport.find(':', colon + 1) != std::string_view::npos) {
        fail_invalid("url: host " + quote(hostport) +
                     " has several ':'; write an IPv6 address in brackets, as [::1]:6379");
      }
      host = hostport.substr(0, colon);
      port = hostport.substr(colon + 1);
    }
    if (host.empty()) fail_invalid("url: host " + quote(hostport) + " is empty");
    if (host.size() > kMaxHostLength) {
      fail_invalid("url: host is longer than " + std::to_string(kMaxHostLength) + " bytes");
    }
    if (!is_host_name(host)) {
      fail_invalid("url: host " + quote(host) +
                   " may hold only letters, digits, '-', '.' and '_' (or an IPv6 address in [])");
    }
  }
  e.host = std::string(host);
  if (hostport.back() == ':') fail_invalid("url: host " + quote(hostport) + " has an empty port");
  if (!port.empty()) e.port = static_cast<int>(parse_count("url port", port, 1, 65535));
  return e;
}

}  // namespace

bool is_url_scheme(std::string_view s) {
  if (s.empty() || s.size() > 32 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

Url parse_store_url(std::string_view text) {
  const bool sentinel = text.substr(0, 17) == "redis+sentinel://";
  return parse_url(text, sentinel ? 26379 : 6379);
}

Url parse_url(std::string_view text, int default_port) {
  Url url;
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) {
    // The text is not quoted: without structure, nothing says where a password is.
    fail_invalid("url: has no scheme; expected memory:// or redis://host:port");
  }
  url.scheme = std::string(text.substr(0, scheme_end));
  if (!is_url_scheme(url.scheme)) {
    fail_invalid("url: scheme is not a name; expected memory:// or redis://host:port");
  }
  std::string_view rest = text.substr(scheme_end + 3);

  // Userinfo first, up to the last '@': a password may hold '/', '?', '#' or
  // '@' as they are, so nothing before that '@' is read as path or query.
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      // "redis://secret@host": a lone credential is a password, as in redis-cli.
      url.password = percent_decode(userinfo, "the password");
    } else {
      url.user = percent_decode(userinfo.substr(0, colon), "the user name");
      url.password = percent_decode(userinfo.substr(colon + 1), "the password");
    }
  }
  if (rest.find('#') != std::string_view::npos) {
    fail_invalid("url: has a '#' fragment, which no store takes (escape a '#' as %23)");
  }
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        fail_invalid("url: query item " + quote(pair) + " is not key=value");
      }
      url.query.emplace_back(std::string(pair.substr(0, eq)),
                             percent_decode(pair.substr(eq + 1), "a query value"));
      query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
  }
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    url.path = std::string(rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }
  const bool has_hosts = !rest.empty();
  while (has_hosts) {
    size_t comma = rest.find(',');
    url.endpoints.push_back(parse_endpoint(rest.substr(0, comma), default_port));
    if (url.endpoints.size() > kMaxEndpoints) {
      fail_invalid("url: more than " + std::to_string(kMaxEndpoints) + " hosts");
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return url;
}

}  // namespace rl
