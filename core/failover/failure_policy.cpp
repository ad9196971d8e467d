#include "failure_policy.h"

#include <charconv>
#include <numeric>

#include "config/policy.h"
#include "error.h"
#include "quote.h"

namespace rl {
namespace {

bool parse_whole(std::string_view text, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

int64_t scaled(int64_t value, const FailurePolicy& f) {
  const auto v = static_cast<__int128>(value) * f.share_numerator / f.share_denominator;
  return std::max<int64_t>(1, static_cast<int64_t>(v));
}

}  // namespace

OnFailure parse_on_failure(std::string_view text) {
  if (text == "closed") return OnFailure::closed;
  if (text == "open") return OnFailure::open;
  if (text == "local") return OnFailure::local;
  fail_invalid("on_failure: " + quote(text) + " is not closed, open or local");
}

FailurePolicy parse_local_share(std::string_view text) {
  return parse_share("local_share", text);
}

FailurePolicy parse_share(std::string_view name, std::string_view text) {
  FailurePolicy f;
  auto bad = [&] {
    fail_invalid(std::string(name) + ": " + quote(text) +
                 " is not a share from 0 to 1, such as 1/4, 0.25 or 1");
  };
  constexpr int64_t kMaxPart = 1000000;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    if (!parse_whole(text.substr(0, slash), f.share_numerator) ||
        !parse_whole(text.substr(slash + 1), f.share_denominator)) {
      bad();
    }
  } else if (size_t dot = text.find('.'); dot != std::string_view::npos) {
    // "0.25": digits after the point over a power of ten.
    int64_t whole = 0;
    std::string_view fraction = text.substr(dot + 1);
    if ((dot > 0 && !parse_whole(text.substr(0, dot), whole)) || fraction.empty() ||
        fraction.size() > 6 || !parse_whole(fraction, f.share_numerator) ||
        fraction.find_first_not_of("0123456789") != std::string_view::npos) {
      bad();
    }
    f.share_denominator = 1;
    for (size_t i = 0; i < fraction.size(); ++i) f.share_denominator *= 10;
    f.share_numerator += whole * f.share_denominator;
  } else if (!parse_whole(text, f.share_numerator)) {
    bad();
  }
  if (f.share_numerator <= 0 || f.share_denominator <= 0 || f.share_denominator > kMaxPart ||
      f.share_numerator > f.share_denominator) {
    bad();
  }
  const int64_t g = std::gcd(f.share_numerator, f.share_denominator);
  f.share_numerator /= g;
  f.share_denominator /= g;
  return f;
}

FailurePolicy FailurePolicy::from(const Settings& settings) {
  const FailurePolicy& f = settings.limiter().failure;
  if (settings.has("local_share") && f.on_failure != OnFailure::local) {
    fail_invalid("local_share: applies only with on_failure=local");
  }
  return f;
}

Policy local_policy(const Policy& policy) {
  Policy local = policy;
  for (Rate& r : local.rates) {
    r.limit = scaled(r.limit, policy.failure);
    r.burst = scaled(r.burst, policy.failure);
    finish_rate(r);
  }
  return local;
}

}  // namespace rl
