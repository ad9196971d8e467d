#include "case_runner.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include "rl_handles.h"

namespace conformance {

using rl_handles::Config;
using rl_handles::Error;
using rl_handles::Limiter;
using rl_handles::Store;
namespace {

const std::set<std::string> kCaseFields = {"name",  "limiter",          "clock",
                                           "error", "message_contains", "steps"};
const std::set<std::string> kVerbs = {"acquire", "peek", "refund", "reset", "advance"};
const std::set<std::string> kStepModifiers = {"repeat",           "each",         "expect", "error",
                                              "message_contains", "allowed_count"};
const std::set<std::string> kRequestFields = {"key", "key_hex", "key_len", "cost"};
const std::set<std::string> kDecisionFields = {"allowed",           "limit",          "remaining",
                                               "retry_after_us",    "reset_after_us", "limit_index",
                                               "suppression_factor"};

void require_map(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) throw BadCase(where + " must be a map");
}

// Rejects fields the format does not know: a typo must not silently pass.
void check_fields(const YAML::Node& map, const std::set<std::string>& known,
                  const std::string& where) {
  require_map(map, where);
  for (const auto& item : map) {
    const std::string field = item.first.Scalar();
    if (!known.count(field)) throw BadCase(where + ": unknown field '" + field + "'");
  }
}

int64_t to_int(const YAML::Node& node, const std::string& what) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw BadCase(what + ": '" + text + "' is not an int64");
  }
  return value;
}

double to_double(const YAML::Node& node, const std::string& what) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw BadCase(what + ": '" + text + "' is not a number");
  }
  return value;
}

bool to_bool(const YAML::Node& node, const std::string& what) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  if (text == "true") return true;
  if (text == "false") return false;
  throw BadCase(what + ": '" + text + "' is not true or false");
}

std::string status_name(int status) {
  const char* name = rl_status_name(status);
  return name ? name : "status " + std::to_string(status);
}

// A call's result: RL_OK with a decision, or a failure status and message.
struct CallResult {
  rl_status status = RL_OK;
  std::string message;
  rl_decision decision{};
};

// Runs one C call that takes `rl_error **err` last and collects its status
// and message.
template <class Call>
CallResult invoke(Call&& call) {
  rl_error* raw = nullptr;
  CallResult r;
  r.status = call(&raw);
  const Error err(raw);
  r.message = rl_error_message(err.get());
  return r;
}

std::string describe(const rl_decision& d) {
  std::ostringstream s;
  s << "{allowed: " << (d.allowed ? "true" : "false") << ", limit: " << d.limit
    << ", remaining: " << d.remaining << ", retry_after_us: " << d.retry_after_us
    << ", reset_after_us: " << d.reset_after_us << ", limit_index: " << d.limit_index
    << ", suppression_factor: " << d.suppression_factor << "}";
  return s.str();
}

// Compares the fields listed in `expect` with `d`; "" when they all match.
std::string compare_decision(const YAML::Node& expect, const rl_decision& d,
                             const std::string& where) {
  check_fields(expect, kDecisionFields, where);
  std::string diffs;
  auto differ = [&](const std::string& field, const std::string& want, const std::string& got) {
    diffs += (diffs.empty() ? "" : ", ") + field + ": expected " + want + ", got " + got;
  };
  for (const auto& item : expect) {
    const std::string field = item.first.Scalar();
    if (field == "allowed") {
      const bool want = to_bool(item.second, where + ".allowed");
      if (want != (d.allowed != 0)) {
        differ(field, want ? "true" : "false", d.allowed ? "true" : "false");
      }
      continue;
    }
    if (field == "suppression_factor") {
      // Multiples of 2^-24: the YAML's decimal is exact when it is one.
      const double want = to_double(item.second, where + ".suppression_factor");
      if (want != d.suppression_factor) {
        std::ostringstream w, g;
        w << want;
        g << d.suppression_factor;
        differ(field, w.str(), g.str());
      }
      continue;
    }
    const int64_t want = to_int(item.second, where + "." + field);
    const int64_t got = field == "limit"            ? d.limit
                        : field == "remaining"      ? d.remaining
                        : field == "retry_after_us" ? d.retry_after_us
                        : field == "limit_index"    ? d.limit_index
                                                    : d.reset_after_us;
    if (want != got) differ(field, std::to_string(want), std::to_string(got));
  }
  return diffs.empty() ? "" : diffs + " in " + describe(d);
}

// Checks a result against the `error` / `message_contains` of `node`.
std::string compare_status(const YAML::Node& node, const CallResult& r) {
  const YAML::Node error = node["error"];
  const YAML::Node contains = node["message_contains"];
  if (!error) {
    if (contains) throw BadCase("message_contains without error");
    if (r.status == RL_OK) return "";
    return "expected success, got " + status_name(r.status) + ": " + r.message;
  }
  const std::string want = error.Scalar();
  if (r.status != RL_OK && status_name(r.status) == want) {
    if (contains && r.message.find(contains.Scalar()) == std::string::npos) {
      return "message '" + r.message + "' does not contain '" + contains.Scalar() + "'";
    }
    return "";
  }
  if (r.status == RL_OK) return "expected " + want + ", got RL_OK";
  return "expected " + want + ", got " + status_name(r.status) + ": " + r.message;
}

std::string decode_hex(const std::string& hex, const std::string& where) {
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw BadCase(where + ".key_hex: '" + hex + "' is not hex");
  };
  if (hex.size() % 2 != 0) throw BadCase(where + ".key_hex: odd number of digits");
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    bytes += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  }
  return bytes;
}

// The key bytes of a request: key, key_hex or key_len; empty when none.
std::string key_of(const YAML::Node& request, const std::string& where) {
  const int given = !!request["key"] + !!request["key_hex"] + !!request["key_len"];
  if (given > 1) throw BadCase(where + ": give only one of key, key_hex, key_len");
  if (request["key"]) return request["key"].Scalar();
  if (request["key_hex"]) return decode_hex(request["key_hex"].Scalar(), where);
  if (request["key_len"]) {
    const int64_t len = to_int(request["key_len"], where + ".key_len");
    if (len < 0 || len > (1 << 20)) throw BadCase(where + ".key_len: out of range");
    return std::string(static_cast<size_t>(len), 'x');
  }
  return "";
}

class CaseRun {
 public:
  explicit CaseRun(const YAML::Node& c) : case_(c) {}

  std::string run(const std::string& store_url, const std::string& alternate_url) {
    if (std::string failed = open_store(store_url, store_); !failed.empty()) return failed;
    if (!alternate_url.empty()) {
      if (std::string failed = open_store(alternate_url, alternate_store_); !failed.empty()) {
        return failed;
      }
    }
    const bool setup_fails = static_cast<bool>(case_["error"]);
    if (setup_fails && case_["steps"]) throw BadCase("a case with error has no steps");
    if (!setup_fails && !case_["steps"]) throw BadCase("a case needs steps or an error");
    const CallResult setup = make_limiter();
    if (std::string diff = compare_status(case_, setup); !diff.empty()) {
      return "limiter: " + diff;
    }
    if (setup_fails) return "";
    const YAML::Node steps = case_["steps"];
    if (!steps.IsSequence()) throw BadCase("steps must be a list");
    for (size_t i = 0; i < steps.size(); ++i) {
      if (std::string failed = run_step(steps[i], i + 1); !failed.empty()) return failed;
    }
    return "";
  }

 private:
  std::string open_store(const std::string& url, Store& store) {
    rl_store* raw = nullptr;
    const CallResult opened =
        invoke([&](rl_error** err) { return rl_store_open(url.c_str(), nullptr, &raw, err); });
    store.reset(raw);
    if (opened.status != RL_OK) {
      return "store " + url + ": " + status_name(opened.status) + ": " + opened.message;
    }
    const int64_t start = case_["clock"] ? to_int(case_["clock"], "clock") : 0;
    const CallResult set =
        invoke([&](rl_error** err) { return rl_store_clock_set(store.get(), start, err); });
    if (set.status != RL_OK) return "clock " + std::to_string(start) + ": " + set.message;
    return "";
  }

  // Applies the settings in file order; the first failure is the result.
  CallResult make_limiter() {
    const YAML::Node settings = case_["limiter"];
    require_map(settings, "limiter");
    Config cfg(rl_config_new());
    for (const auto& item : settings) {
      const std::string key = item.first.Scalar();
      if (!item.second.IsScalar()) throw BadCase("limiter." + key + " is not a scalar");
      const std::string value = item.second.Scalar();
      const CallResult set = invoke([&](rl_error** err) {
        return rl_config_set(cfg.get(), key.c_str(), value.c_str(), err);
      });
      if (set.status != RL_OK) return set;
    }
    rl_limiter* raw = nullptr;
    const CallResult made =
        invoke([&](rl_error** err) { return rl_limiter_new(store_.get(), cfg.get(), &raw, err); });
    limiter_.reset(raw);
    if (made.status == RL_OK && alternate_store_) {
      rl_limiter* other = nullptr;
      const CallResult also = invoke([&](rl_error** err) {
        return rl_limiter_new(alternate_store_.get(), cfg.get(), &other, err);
      });
      alternate_limiter_.reset(other);
      if (also.status != RL_OK) return also;
    }
    return made;
  }

  std::string run_step(const YAML::Node& step, size_t number) {
    std::string verb;
    for (const auto& item : step) {
      const std::string field = item.first.Scalar();
      if (kVerbs.count(field)) {
        if (!verb.empty()) throw BadCase("step " + std::to_string(number) + ": two verbs");
        verb = field;
      } else if (!kStepModifiers.count(field)) {
        throw BadCase("step " + std::to_string(number) + ": unknown field '" + field + "'");
      }
    }
    if (verb.empty()) throw BadCase("step " + std::to_string(number) + ": no verb");
    const std::string where = "step " + std::to_string(number) + " (" + verb + ")";
    const int64_t repeat = step["repeat"] ? to_int(step["repeat"], where + ".repeat") : 1;
    if (repeat < 1) throw BadCase(where + ".repeat must be at least 1");
    const bool decides = verb == "acquire" || verb == "peek" || verb == "refund";
    if (!decides && (step["expect"] || step["each"] || step["allowed_count"])) {
      throw BadCase(where + ": " + verb + " returns no decision to expect");
    }
    int64_t allowed = 0;  // over the repeats, for allowed_count
    for (int64_t i = 1; i <= repeat; ++i) {
      const std::string at =
          repeat == 1 ? where : where + " #" + std::to_string(i) + " of " + std::to_string(repeat);
      const CallResult r = call(verb, step[verb], at);
      if (std::string diff = compare_status(step, r); !diff.empty()) return at + ": " + diff;
      if (r.status != RL_OK) continue;
      if (r.decision.allowed) ++allowed;
      if (step["each"]) {
        if (std::string diff = compare_decision(step["each"], r.decision, at + ".each");
            !diff.empty()) {
          return at + ": " + diff;
        }
      }
      if (i == repeat && step["expect"]) {
        if (std::string diff = compare_decision(step["expect"], r.decision, at + ".expect");
            !diff.empty()) {
          return at + ": " + diff;
        }
      }
    }
    if (step["allowed_count"]) {
      const int64_t want = to_int(step["allowed_count"], where + ".allowed_count");
      if (want != allowed) {
        return where + ": allowed_count: expected " + std::to_string(want) + ", got " +
               std::to_string(allowed);
      }
    }
    return "";
  }

  CallResult call(const std::string& verb, const YAML::Node& args, const std::string& where) {
    if (verb == "advance") {
      const int64_t delta = to_int(args, where);
      if (alternate_store_) {
        const CallResult also = invoke([&](rl_error** err) {
          return rl_store_clock_advance(alternate_store_.get(), delta, err);
        });
        if (also.status != RL_OK) return also;
      }
      return invoke(
          [&](rl_error** err) { return rl_store_clock_advance(store_.get(), delta, err); });
    }
    if (!args.IsMap() && !args.IsNull()) throw BadCase(where + ": expected {key, cost}");
    if (args.IsMap()) check_fields(args, kRequestFields, where);
    const std::string key = key_of(args, where);
    rl_limiter* lim = limiter_.get();
    if (alternate_limiter_ && calls_++ % 2 == 1) lim = alternate_limiter_.get();
    if (verb == "reset") {
      if (args["cost"]) throw BadCase(where + ": reset takes no cost");
      return invoke(
          [&](rl_error** err) { return rl_limiter_reset(lim, key.data(), key.size(), err); });
    }
    rl_request req{};
    req.version = RL_REQUEST_VERSION;
    req.key = key.data();
    req.key_len = key.size();
    req.cost = args["cost"] ? to_int(args["cost"], where + ".cost") : 1;
    rl_decision d{};
    d.version = RL_DECISION_VERSION;
    CallResult r = invoke([&](rl_error** err) {
      if (verb == "acquire") return rl_limiter_acquire(lim, &req, &d, err);
      if (verb == "peek") return rl_limiter_peek(lim, &req, &d, err);
      return rl_limiter_refund(lim, &req, &d, err);
    });
    r.decision = d;
    return r;
  }

  const YAML::Node& case_;
  Store store_;
  Store alternate_store_;  // --alternate-url: every other call goes here
  Limiter limiter_;        // declared after the stores: freed before them
  Limiter alternate_limiter_;
  int64_t calls_ = 0;
};

}  // namespace

std::string run_case(const YAML::Node& case_node, const std::string& store_url,
                     const std::string& alternate_url) {
  check_fields(case_node, kCaseFields, "case");
  return CaseRun(case_node).run(store_url, alternate_url);
}

}  // namespace conformance
