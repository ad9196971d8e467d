// Store URLs: scheme://[user[:password]@]host[:port][,host[:port]...][/path][?k=v&...]
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl {

struct Endpoint {
  std::string host;
  int port = 0;
};

struct Url {
  std::string scheme;
  std::string user;
  std::string password;
  std::vector<Endpoint> endpoints;
  std::string path;  // after the first '/', without it
  std::vector<std::pair<std::string, std::string>> query;
};

// Throws invalid_arg naming "url" and what is wrong. Percent-escapes in the
// user and password are decoded.
Url parse_url(std::string_view text, int default_port);

// parse_url as a store reads its URL: hosts default to port 26379 for
// redis+sentinel:// (sentinels), else to 6379.
Url parse_store_url(std::string_view text);

// RFC 3986: a letter, then letters, digits, '+', '-' or '.' (at most 32).
bool is_url_scheme(std::string_view s);

}  // namespace rl
