// Store URLs: rl::parse_url, and rl_store_open on the same text (stores that
// need no network only: memory://, and schemes this build refuses).
// Properties: a bad URL is rl::Error invalid_arg with a short printable
// message that never carries the password (a canary put into the
// password never comes out); a parsed URL keeps its bounds
// (at most 64 hosts, ports 1-65535, no empty host or query key); and
// rl_store_open agrees with parse_url.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "config/url.h"
#include "error.h"
#include "fuzz_check.h"

namespace {

using rl_fuzz::check;

// A marker no message template holds: put into a password, it must never
// come out in a message.
constexpr std::string_view kCanary = "Zq7CanaryPw";

// text with kCanary inserted where its password starts (after "user:", or
// after "://" for a lone password); nullopt without userinfo.
std::optional<std::string> with_canary_password(std::string_view text) {
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  const size_t start = scheme_end + 3;
  const std::string_view rest = text.substr(start);
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  const size_t colon = rest.substr(0, at).find(':');
  const size_t password_at = start + (colon == std::string_view::npos ? 0 : colon + 1);
  std::string out(text);
  out.insert(password_at, kCanary);
  return out;
}

// parse_url's message for text, "" when it parses.
std::string failure_of(const std::string& text) {
  try {
    rl::parse_url(text, 6379);
  } catch (const rl::Error& e) {
    return e.what();
  }
  return "";
}

void check_parsed(const rl::Url& url) {
  check(!url.scheme.empty(), "parsed URL has an empty scheme");
  check(url.endpoints.size() <= 64, "parsed URL has more than 64 hosts");
  for (const rl::Endpoint& e : url.endpoints) {
    check(!e.host.empty(), "parsed URL has an empty host");
    check(e.port >= 1 && e.port <= 65535, "parsed URL has a port outside 1-65535", e.host);
  }
  for (const auto& [key, value] : url.query) {
    check(!key.empty(), "parsed URL has an empty query key", value);
  }
}

// rl_store_open on text: the same verdict as parse_url, and for memory:// a
// store that decides.
void check_store_open(const std::string& text, const std::optional<rl::Url>& url,
                      const std::string& parse_message) {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  const rl_status status = rl_store_open(text.c_str(), nullptr, &store, &err);
  if (!url) {
    rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
    check(status == RL_E_INVALID_ARG, "rl_store_open took a URL parse_url refused", text);
    check(parse_message == rl_error_message(err),
          "rl_store_open names another fault than parse_url", rl_error_message(err));
  } else {
    rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG, RL_E_UNSUPPORTED});
    check(status != RL_OK || url->scheme == "memory", "a store opened from a non-memory URL", text);
  }
  rl_error_free(err);
  if (store == nullptr) return;

  rl_config* cfg = rl_config_new();
  check(rl_config_set(cfg, "limit", "2/s", nullptr) == RL_OK, "limit 2/s refused");
  rl_limiter* limiter = nullptr;
  check(rl_limiter_new(store, cfg, &limiter, nullptr) == RL_OK, "limiter on a new store refused");
  const rl_request request{RL_REQUEST_VERSION, "k", 1, 1, 0};
  rl_decision decision{};
  decision.version = RL_DECISION_VERSION;
  check(rl_limiter_acquire(limiter, &request, &decision, nullptr) == RL_OK,
        "first acquire on a new store failed");
  check(decision.allowed == 1 && decision.remaining == 1, "first acquire on a new store denied");
  rl_limiter_free(limiter);
  rl_config_free(cfg);
  rl_store_free(store);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The C ABI sees the text up to its first NUL; parse_url gets the same.
  const char* bytes = reinterpret_cast<const char*>(data);
  const std::string text(bytes, strnlen(bytes, size));

  std::optional<rl::Url> url;
  std::string message;
  try {
    url = rl::parse_url(text, 6379);
  } catch (const rl::Error& e) {
    check(e.code() == rl::Code::invalid_arg,
          "parse_url failed with a status other than invalid_arg", e.what());
    message = e.what();
    rl_fuzz::check_message(message);
  }
  // Only the canary we put in can come out (the fuzzer may write it elsewhere).
  if (const auto marked = with_canary_password(text);
      marked && text.find(kCanary) == std::string::npos) {
    const std::string marked_message = failure_of(*marked);
    check(marked_message.find(kCanary) == std::string::npos, "a message carries the password",
          marked_message);
  }
  if (url) check_parsed(*url);
  // redis://, rediss://, redis+sentinel:// and the cluster schemes would
  // connect; everything else is decided without a network.
  const bool connects = url && (url->scheme == "redis" || url->scheme == "rediss" ||
                                url->scheme == "redis+sentinel" || url->scheme == "redis+cluster" ||
                                url->scheme == "rediss+cluster");
  if (!connects) check_store_open(text, url, message);
  return 0;
}
