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

}  // namespace rl
