#include "case_runner.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "rl_handles.h"

namespace conformance {

using rl_handles::Config;
using rl_handles::Error;
using rl_handles::Limiter;
using rl_handles::Store;
namespace {

int64_t to_int(const YAML::Node& node, const std::string& what) {
  const std::string& text = node.Scalar();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw BadCase(what + ": '" + text + "' is not an int64");
  }
  return value;
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
std::string compare_decision(const Schema& schema, const YAML::Node& expect, const rl_decision& d,
                             const std::string& where) {
  std::string diffs;
  auto differ = [&](const std::string& field, const std::string& want, const std::string& got) {
    diffs += (diffs.empty() ? "" : ", ") + field + ": expected " + want + ", got " + got;
  };
  for (const auto& item : expect) {
    const std::string field = item.first.Scalar();
    const std::string type = schema.type_of("decision", field);
    if (type == "bool") {
      const bool want = item.second.Scalar() == "true";
      if (want != (d.allowed != 0)) {
        differ(field, want ? "true" : "false", d.allowed ? "true" : "false");
      }
      continue;
    }
    if (type == "number") {  // suppression_factor
      // Multiples of 2^-24: the YAML's decimal is exact when it is one.
      const double want = std::strtod(item.second.Scalar().c_str(), nullptr);
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

// Hex digits the schema has checked.
std::string decode_hex(const std::string& hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    return (c | 0x20) - 'a' + 10;
  };
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    bytes += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  }
  return bytes;
}

// The key bytes of a request: key, key_hex or key_len; empty when none.
std::string key_of(const YAML::Node& request, const std::string& where) {
  if (request["key"]) return request["key"].Scalar();
  if (request["key_hex"]) return decode_hex(request["key_hex"].Scalar());
  if (request["key_len"]) {
    const int64_t len = to_int(request["key_len"], where + ".key_len");
    if (len < 0 || len > (1 << 20)) throw BadCase(where + ".key_len: out of range");
    return std::string(static_cast<size_t>(len), 'x');
  }
  return "";
}

class CaseRun {
 public:
  CaseRun(const Schema& schema, const YAML::Node& c) : schema_(schema), case_(c) {}

  std::string run(const std::string& store_url, const std::string& alternate_url) {
    if (std::string failed = open_store(store_url, store_); !failed.empty()) return failed;
    if (!alternate_url.empty()) {
      if (std::string failed = open_store(alternate_url, alternate_store_); !failed.empty()) {
        return failed;
      }
    }
    const bool setup_fails = static_cast<bool>(case_["error"]);
    const CallResult setup = make_limiter();
    if (std::string diff = compare_status(case_, setup); !diff.empty()) {
      return "limiter: " + diff;
    }
    if (setup_fails) return "";
    const YAML::Node steps = case_["steps"];
    for (size_t i = 0; i < steps.size(); ++i) {
      if (std::string failed = run_step(steps[i], i + 1); !failed.empty()) return failed;
    }
    return "";
  }

 private:
  // The case's `processes`: that many limiters on the one store.
  size_t process_count() const {
    const int64_t n = to_int(case_["processes"], "processes");
    if (n < 1 || n > 64) throw BadCase("processes: " + std::to_string(n) + " is not 1 to 64");
    return static_cast<size_t>(n);
  }

  std::string open_store(const std::string& url, Store& store) {
    rl_store* raw = nullptr;
    const CallResult opened =
        invoke([&](rl_error** err) { return rl_store_open(url.c_str(), nullptr, &raw, err); });
    store.reset(raw);
    if (opened.status != RL_OK) {
      return "store " + url + ": " + status_name(opened.status) + ": " + opened.message;
    }
    const int64_t start = to_int(case_["clock"], "clock");
    const CallResult set =
        invoke([&](rl_error** err) { return rl_store_clock_set(store.get(), start, err); });
    if (set.status != RL_OK) return "clock " + std::to_string(start) + ": " + set.message;
    return "";
  }

  // Applies the settings in file order; the first failure is the result.
  CallResult make_limiter() {
    Config cfg(rl_config_new());
    for (const auto& item : case_["limiter"]) {
      const std::string key = item.first.Scalar();
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
    for (size_t p = 1; made.status == RL_OK && p < process_count(); ++p) {
      rl_limiter* another = nullptr;
      const CallResult also = invoke(
          [&](rl_error** err) { return rl_limiter_new(store_.get(), cfg.get(), &another, err); });
      processes_.emplace_back(another);
      if (also.status != RL_OK) return also;
    }
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
    const std::string verb = schema_.verb_of(step);
    const std::string where = "step " + std::to_string(number) + " (" + verb + ")";
    const int64_t repeat = to_int(step["repeat"], where + ".repeat");
    const int64_t process = to_int(step["process"], where + ".process");
    if (process < 0 || static_cast<size_t>(process) >= process_count()) {
      throw BadCase(where + ".process: " + std::to_string(process) + " is not below processes (" +
                    std::to_string(process_count()) + ")");
    }
    if (verb == "stats") return check_stats(step[verb], where);
    if (repeat < 1) throw BadCase(where + ".repeat must be at least 1");
    int64_t allowed = 0;  // over the repeats, for allowed_count
    for (int64_t i = 1; i <= repeat; ++i) {
      const std::string at =
          repeat == 1 ? where : where + " #" + std::to_string(i) + " of " + std::to_string(repeat);
      const CallResult r = call(verb, step[verb], at, static_cast<size_t>(process));
      if (std::string diff = compare_status(step, r); !diff.empty()) return at + ": " + diff;
      if (r.status != RL_OK) continue;
      if (r.decision.allowed) ++allowed;
      if (step["each"]) {
        if (std::string diff = compare_decision(schema_, step["each"], r.decision, at + ".each");
            !diff.empty()) {
          return at + ": " + diff;
        }
      }
      if (i == repeat && step["expect"]) {
        if (std::string diff =
                compare_decision(schema_, step["expect"], r.decision, at + ".expect");
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

  // The store's counters (both stores' with --alternate-url) against `want`.
  std::string check_stats(const YAML::Node& want, const std::string& where) {
    uint64_t got[5] = {};
    for (const Store* store : {&store_, &alternate_store_}) {
      if (!*store) continue;
      rl_store_stats s{};
      s.version = RL_STORE_STATS_VERSION;
      const CallResult r =
          invoke([&](rl_error** err) { return rl_store_get_stats(store->get(), &s, err); });
      if (r.status != RL_OK) return where + ": " + status_name(r.status) + ": " + r.message;
      const uint64_t each[5] = {s.leases_taken, s.lease_units_leased, s.lease_units_unused,
                                s.lease_units_returned, s.lease_decisions};
      for (size_t i = 0; i < 5; ++i) got[i] += each[i];
    }
    static const char* const names[5] = {"leases_taken", "lease_units_leased", "lease_units_unused",
                                         "lease_units_returned", "lease_decisions"};
    std::string diffs;
    for (size_t i = 0; i < 5; ++i) {
      if (!want[names[i]]) continue;
      const int64_t expected = to_int(want[names[i]], where + "." + names[i]);
      if (static_cast<uint64_t>(expected) != got[i]) {
        diffs += (diffs.empty() ? "" : ", ") + std::string(names[i]) + ": expected " +
                 std::to_string(expected) + ", got " + std::to_string(got[i]);
      }
    }
    return diffs.empty() ? "" : where + ": " + diffs;
  }

  CallResult call(const std::string& verb, const YAML::Node& args, const std::string& where,
                  size_t process) {
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
    const std::string key = key_of(args, where);
    rl_limiter* lim = process == 0 ? limiter_.get() : processes_[process - 1].get();
    if (alternate_limiter_ && calls_++ % 2 == 1) lim = alternate_limiter_.get();
    if (verb == "reset") {
      return invoke(
          [&](rl_error** err) { return rl_limiter_reset(lim, key.data(), key.size(), err); });
    }
    rl_request req{};
    req.version = RL_REQUEST_VERSION;
    req.key = key.data();
    req.key_len = key.size();
    req.cost = to_int(args["cost"], where + ".cost");
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

  const Schema& schema_;
  const YAML::Node& case_;
  Store store_;
  Store alternate_store_;  // --alternate-url: every other call goes here
  Limiter limiter_;        // declared after the stores: freed before them
  Limiter alternate_limiter_;
  std::vector<Limiter> processes_;  // processes 1 to processes - 1 (0 is limiter_)
  int64_t calls_ = 0;
};

}  // namespace

std::string run_case(const Schema& schema, const YAML::Node& case_node,
                     const std::string& store_url, const std::string& alternate_url) {
  schema.check(case_node, "case", "case");
  return CaseRun(schema, case_node).run(store_url, alternate_url);
}

}  // namespace conformance
