// The display form of a store URL: the URL as a store shows it
// (rl_store_display_url), read by the parser that opens the store and
// written again with every credential replaced by ***.
#pragma once

#include <string>
#include <string_view>

namespace rl {

struct Url;

// scheme://[user:***@ | ***@]host:port[,host:port...][/path][?key=value&...]
// The password is ***, and so is the value of every secret setting
// (settings.cpp) and of every key that is no setting. Ports are shown even
// when the URL left them to their default.
std::string display_url(const Url& url);

// The display form of text as parse_store_url reads it. Text it refuses
// shows as "scheme://***" (or "***" without a scheme): without its structure
// nothing says where a credential is, so none of it is shown.
std::string display_url(std::string_view text);

}  // namespace rl
