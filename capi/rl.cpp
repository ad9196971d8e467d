// The extern "C" layer: turns C calls into core calls and every failure into
// an rl_status plus an rl_error. Nothing thrown crosses this file.
#include "rl/rl.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "clock.h"
#include "config/url_display.h"
#include "failover/circuit_breaker.h"
#include "failover/outage.h"
#include "limiter.h"
#include "rate_limit_headers.h"
#include "store.h"
#include "wait.h"

struct rl_error {
  rl_status status;
  std::string message;
};

struct rl_config {
  rl::Settings settings;
};

struct rl_store {
  std::shared_ptr<rl::Store> store;
  std::string display_url;  // rl_store_display_url
};

struct rl_limiter {
  std::shared_ptr<rl::Limiter> limiter;
};

struct rl_wait {
  std::shared_ptr<rl::Wait> wait;
};

namespace {

rl_status report(rl_error** err, rl_status status, std::string message) {
  if (err != nullptr) {
    *err = new (std::nothrow) rl_error{status, std::move(message)};
  }
  return status;
}

rl_status report(rl_error** err, rl::Code code, std::string message) {
  return report(err, static_cast<rl_status>(code), std::move(message));
}

// Runs body, mapping every exception to a status and an error object.
template <class Body>
rl_status guarded(rl_error** err, Body&& body) noexcept {
  try {
    return body();
  } catch (const rl::Error& e) {
    return report(err, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return report(err, RL_E_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return report(err, RL_E_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return report(err, RL_E_INTERNAL, "internal error: unknown exception");
  }
}

// The checks' failures, out of line: building a message inline made each
// check save six registers and reserve a frame on every call.
[[noreturn, gnu::cold, gnu::noinline]] void fail_null(std::string_view what) {
  rl::fail_invalid(std::string(what) + ": is NULL");
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_version(uint32_t version, uint32_t ours,
                                                         std::string_view what) {
  rl::fail_invalid(std::string(what) + ".version: " + std::to_string(version) +
                   " is not a version this library knows (1 to " + std::to_string(ours) + ")");
}

void require(const void* p, std::string_view what) {
  if (p == nullptr) [[unlikely]]
    fail_null(what);
}

// Versioned structs: 0 is "not set", above ours is from a newer rl.h.
void check_version(uint32_t version, uint32_t ours, std::string_view what) {
  if (version == 0 || version > ours) [[unlikely]]
    fail_version(version, ours, what);
}

// The layouts of version 1, as callers built against that rl.h have them:
// a struct of an older version is smaller, and arrays of it step by its size.
struct rl_request_v1 {
  uint32_t version;
  const char* key;
  size_t key_len;
  int64_t cost;
};
static_assert(offsetof(rl_request, timeout_us) == sizeof(rl_request_v1),
              "rl_request v2 must only add fields after the v1 ones");
static_assert(offsetof(rl_decision, limit_index) >= offsetof(rl_decision, source) + sizeof(int32_t),
              "rl_decision v2 must only add fields after the v1 ones");

static_assert(offsetof(rl_decision, suppression_factor) == 48 && sizeof(rl_decision) == 56,
              "rl_decision v3 adds one double after the 48 bytes of v1 and v2");

struct rl_store_info_v1 {
  uint32_t version;
  int32_t in_process;
  int32_t manual_clock;
  const char* scheme;
};
static_assert(offsetof(rl_store_info, script_mode) == sizeof(rl_store_info_v1),
              "rl_store_info v2 must only add fields after the v1 ones");

static_assert(offsetof(rl_store_stats, leases_taken) == 248 && sizeof(rl_store_stats) == 288,
              "rl_store_stats v2 adds five counters after the 248 bytes of v1");

size_t request_size(uint32_t version) {
  return version == 1 ? sizeof(rl_request_v1) : sizeof(rl_request);
}
// Version 2 only used the padding at the end of version 1: same size.
// Version 3 grew it.
size_t decision_size(uint32_t version) {
  return version <= 2 ? offsetof(rl_decision, suppression_factor) : sizeof(rl_decision);
}

size_t store_info_size(uint32_t version) {
  return version == 1 ? sizeof(rl_store_info_v1) : sizeof(rl_store_info);
}

size_t store_stats_size(uint32_t version) {
  return version == 1 ? offsetof(rl_store_stats, leases_taken) : sizeof(rl_store_stats);
}

// An rl_*_init: the *_INIT value of `version` (every field 0 or NULL but the
// version), written over that version's size only.
template <class T>
rl_status init_versioned(T* out, uint32_t version, uint32_t ours, size_t size,
                         std::string_view what, rl_error** err) {
  return guarded(err, [&] {
    require(out, what);
    check_version(version, ours, what);
    std::memset(static_cast<void*>(out), 0, size);
    out->version = version;
    return RL_OK;
  });
}

// Element i of an array whose elements are all of the first one's version.
template <class T>
T* element(T* first, size_t i, size_t (*size_of)(uint32_t), const std::string& what) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  T* item = reinterpret_cast<T*>(reinterpret_cast<Byte*>(first) + i * size_of(first->version));
  if (item->version != first->version) {
    rl::fail_invalid(what + "[" + std::to_string(i) +
                     "].version: " + std::to_string(item->version) + " differs from " + what +
                     "[0].version " + std::to_string(first->version) +
                     "; every element of an array has the same version");
  }
  return item;
}

std::string_view key_of(const char* key, size_t key_len, const std::string& what) {
  if (key == nullptr && key_len > 0) rl::fail_invalid(what + ": is NULL");
  return key_len == 0 ? std::string_view{} : std::string_view(key, key_len);
}

// A request's key, cost and deadline, checked but not copied: sync calls
// need no allocation for them.
struct RequestView {
  std::string_view key;
  int64_t cost;
  int64_t timeout_us;
};

// A request's name and its fields' names, as messages say them. The sync
// calls' are literals: composing "request.timeout_us" per call was a malloc
// and a free on every decision.
struct RequestNames {
  std::string_view request;
  std::string_view key;
  std::string_view timeout_us;
};
constexpr RequestNames kRequestNames{"request", "request.key", "request.timeout_us"};

RequestView view_of(const rl_request* request, const RequestNames& names = kRequestNames) {
  require(request, names.request);
  check_version(request->version, RL_REQUEST_VERSION, names.request);
  if (request->key == nullptr && request->key_len > 0) {
    rl::fail_invalid(std::string(names.key) + ": is NULL");
  }
  const std::string_view key =
      request->key_len == 0 ? std::string_view{} : std::string_view(request->key, request->key_len);
  // Checked here, before anything reads or copies the key's bytes.
  rl::Limiter::check_key(key, names.key);
  const int64_t timeout_us = request->version >= 2 ? request->timeout_us : 0;
  rl::Limiter::check_timeout(timeout_us, names.timeout_us);
  return {key, request->cost, timeout_us};
}

// The request as a call that owns its key, for async calls and batches.
rl::Call call_of(const rl_request* request, rl::Op op, const RequestNames& names = kRequestNames) {
  const RequestView v = view_of(request, names);
  return rl::Call{op, std::string(v.key), v.cost, v.timeout_us};
}

void fill(rl_decision* out, const rl::Verdict& v) {
  out->allowed = v.allowed ? 1 : 0;
  out->limit = v.limit;
  out->remaining = v.remaining;
  out->retry_after_us = v.retry_after_us;
  out->reset_after_us = v.reset_after_us;
  out->source = static_cast<int32_t>(v.source);
  if (out->version >= 2) out->limit_index = v.limit_index;
  if (out->version >= 3) out->suppression_factor = v.suppression_factor;
}

rl_decision decision_of(const rl::Verdict& v) {
  rl_decision d{};
  d.version = RL_DECISION_VERSION;
  fill(&d, v);
  return d;
}

// A sync call's outcome: its verdict into *decision, or its failure as status.
rl_status finish(const rl::Outcome& o, rl_decision* decision, rl_error** err) {
  if (o.code != rl::Code::ok) return report(err, o.code, o.message);
  if (decision != nullptr) fill(decision, o.verdict);
  return RL_OK;
}

rl_status run_sync(rl_limiter* limiter, rl::Op op, const rl_request* request, rl_decision* decision,
                   bool decision_optional, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    if (!decision_optional || decision != nullptr) {
      require(decision, "decision");
      check_version(decision->version, RL_DECISION_VERSION, "decision");
    }
    const RequestView v = view_of(request);
    return finish(limiter->limiter->run(op, v.key, v.cost, v.timeout_us), decision, err);
  });
}

// An async call's completion: the outcome as the C callback's arguments.
rl::Completion completion_of(rl_callback callback, void* user_data) {
  return [callback, user_data](rl::Outcome&& o) {
    if (o.code != rl::Code::ok) {
      const rl_error e{static_cast<rl_status>(o.code), std::move(o.message)};
      callback(user_data, e.status, nullptr, &e);
      return;
    }
    const rl_decision d = decision_of(o.verdict);
    callback(user_data, RL_OK, &d, nullptr);
  };
}

}  // namespace

extern "C" {

int rl_status_is_outage(int status) {
  return status >= 0 && status < RL_STATUS_COUNT && rl::is_outage(static_cast<rl::Code>(status))
             ? 1
             : 0;
}

static_assert(rl::kCodeCount == RL_STATUS_COUNT, "core codes and rl_status agree");

const char* rl_status_name(int status) {
  return rl::code_name(status);
}

const char* rl_status_description(int status) {
  return rl::code_description(status);
}

static_assert(rl::kHeaderCount == RL_HEADER_COUNT, "core headers and rl_header agree");
static_assert(static_cast<int>(rl::Header::retry_after) == RL_HEADER_RETRY_AFTER);

const char* rl_header_name(int header) {
  return rl::header_name(header);
}

rl_status rl_headers_render(const char* name, const rl_limit_info* limits, size_t limit_count,
                            const rl_decision* decision, char** values, size_t count,
                            rl_error** err) {
  if (values != nullptr) std::fill(values, values + count, nullptr);
  return guarded(err, [&] {
    require(name, "name");
    if (limit_count > 0) require(limits, "limits");
    require(decision, "decision");
    check_version(decision->version, RL_DECISION_VERSION, "decision");
    if (count > 0) require(values, "values");
    // A limiter's few limits on the stack: this runs once per HTTP response.
    std::array<rl::HeaderLimit, 8> few;
    std::vector<rl::HeaderLimit> many(limit_count > few.size() ? limit_count : 0);
    const std::span<rl::HeaderLimit> shown =
        many.empty() ? std::span(few).first(limit_count) : std::span(many);
    for (size_t i = 0; i < limit_count; ++i) shown[i] = {limits[i].limit, limits[i].window_us};
    const rl::HeaderDecision d{decision->allowed != 0,
                               decision->remaining,
                               decision->retry_after_us,
                               decision->reset_after_us,
                               decision->version >= 2 ? decision->limit_index : 0,
                               decision->source};
    const rl::HeaderValues rendered = rl::rate_limit_headers(name, shown, d);
    // Copied only once all rendered, so a failure leaves every value NULL.
    std::vector<char*> copies(std::min<size_t>(count, RL_HEADER_COUNT), nullptr);
    for (size_t i = 0; i < copies.size(); ++i) {
      if (!rendered[i]) continue;
      copies[i] = static_cast<char*>(std::malloc(rendered[i]->size() + 1));
      if (copies[i] == nullptr) {
        for (char* c : copies) std::free(c);
        throw std::bad_alloc();
      }
      std::memcpy(copies[i], rendered[i]->c_str(), rendered[i]->size() + 1);
    }
    std::copy(copies.begin(), copies.end(), values);
    return RL_OK;
  });
}

static_assert(rl::kSourceCount == RL_SOURCE_COUNT, "core sources and rl_source agree");

const char* rl_source_name(int source) {
  return rl::source_name(source);
}

static_assert(rl::kBreakerStateCount == RL_BREAKER_STATE_COUNT, "core and rl_breaker_state agree");
static_assert(static_cast<int>(rl::BreakerState::half_open) == RL_BREAKER_HALF_OPEN);
static_assert(rl::kMaxTime == RL_MAX_WAIT_US, "the core's wait cap is rl.h's");

const char* rl_breaker_state_name(int state) {
  return rl::breaker_state_name(state);
}

const char* rl_version(void) {
  return RL_VERSION_STRING;
}

rl_status rl_error_status(const rl_error* err) {
  return err ? err->status : RL_OK;
}
const char* rl_error_message(const rl_error* err) {
  return err ? err->message.c_str() : "";
}
void rl_error_free(rl_error* err) {
  delete err;
}

rl_config* rl_config_new(void) {
  return new (std::nothrow) rl_config;
}
void rl_config_free(rl_config* cfg) {
  delete cfg;
}

rl_status rl_config_set(rl_config* cfg, const char* key, const char* value, rl_error** err) {
  return guarded(err, [&] {
    require(cfg, "cfg");
    require(key, "key");
    if (value == nullptr) rl::fail_invalid(std::string(key) + ": value is NULL");
    cfg->settings.set(key, value);
    return RL_OK;
  });
}

const char* rl_config_describe(size_t index, const char** description) {
  const rl::SettingInfo* info = rl::setting_at(index);
  if (info == nullptr) return nullptr;
  if (description != nullptr) *description = rl::full_description(*info);
  return info->name;
}

rl_status rl_setting_describe(size_t index, rl_setting_info* info, rl_error** err) {
  return guarded(err, [&] {
    require(info, "info");
    check_version(info->version, RL_SETTING_INFO_VERSION, "info");
    const rl::SettingInfo* s = rl::setting_at(index);
    if (s == nullptr) {
      throw rl::Error(rl::Code::invalid_arg, "rl_setting_describe: index " + std::to_string(index) +
                                                 " is past the last setting");
    }
    info->secret = s->secret ? 1 : 0;
    info->name = s->name;
    info->scope = s->scope == rl::Scope::store ? "store" : "limiter";
    info->kind = rl::kind_name(s->kind);
    info->choices = s->choices;
    info->default_value = s->default_value;
    info->description = s->description;
    info->range_min = s->range ? s->range->min : 0;
    info->range_max = s->range ? s->range->max : 0;
    return RL_OK;
  });
}

rl_status rl_store_open(const char* url, const rl_config* cfg, rl_store** out, rl_error** err) {
  return guarded(err, [&] {
    require(url, "url");
    require(out, "out");
    *out = nullptr;
    auto store = rl::open_store(url, cfg ? cfg->settings : rl::Settings{});
    *out = new rl_store{std::move(store), rl::display_url(std::string_view(url))};
    return RL_OK;
  });
}

rl_status rl_store_get_stats(rl_store* store, rl_store_stats* out, rl_error** err) {
  return guarded(err, [&] {
    require(store, "store");
    require(out, "out");
    check_version(out->version, RL_STORE_STATS_VERSION, "out");
    const rl::StatsView view = store->store->stats_view();
    const rl::StoreStats::Snapshot s = view.stats->snapshot();
    rl_store_stats filled{};
    filled.version = out->version;
    filled.breaker_state = static_cast<int32_t>(view.breaker);
    filled.breaker_opened = static_cast<uint64_t>(view.breaker_opened);
    for (size_t i = 0; i < rl::kSources; ++i) {
      filled.allowed[i] = s.allowed[i];
      filled.denied[i] = s.denied[i];
    }
    for (size_t i = 0; i < rl::kCodes; ++i) filled.failures[i] = s.failures[i];
    const rl::LatencyHistogram& h = view.stats->round_trips;
    filled.round_trips = h.count();
    filled.round_trip_p50_us = h.quantile(0.5);
    filled.round_trip_p95_us = h.quantile(0.95);
    filled.round_trip_p99_us = h.quantile(0.99);
    filled.round_trip_max_us = h.max();
    const rl::LeaseCounts leases = view.stats->leases.snapshot();
    filled.leases_taken = leases.leases_taken;
    filled.lease_units_leased = leases.units_leased;
    filled.lease_units_unused = leases.units_unused;
    filled.lease_units_returned = leases.units_returned;
    filled.lease_decisions = leases.decisions;
    std::memcpy(static_cast<void*>(out), &filled, store_stats_size(out->version));
    return RL_OK;
  });
}

rl_status rl_store_get_node_breakers(rl_store* store, rl_node_breaker* out, size_t capacity,
                                     size_t* count, rl_error** err) {
  return guarded(err, [&] {
    require(store, "store");
    require(count, "count");
    if (capacity > 0) {
      require(out, "out");
      check_version(out[0].version, RL_NODE_BREAKER_VERSION, "out[0]");
    }
    const rl::StatsView view = store->store->stats_view();
    *count = view.nodes.size();
    for (size_t i = 0; i < view.nodes.size() && i < capacity; ++i) {
      const rl::NodeBreakerView& n = view.nodes[i];
      rl_node_breaker filled{};
      filled.version = out[0].version;
      filled.state = static_cast<int32_t>(n.state);
      filled.opened = static_cast<uint64_t>(n.opened);
      n.node.copy(filled.node, sizeof filled.node - 1);
      out[i] = filled;
    }
    return RL_OK;
  });
}

size_t rl_store_format_metrics(rl_store* store, char* buf, size_t capacity) {
  if (store == nullptr) return 0;
  try {
    const std::string text = rl::metrics_text(store->store->stats_view());
    if (buf != nullptr && capacity > 0) {
      const size_t n = std::min(text.size(), capacity - 1);
      std::memcpy(buf, text.data(), n);
      buf[n] = '\0';
    }
    return text.size();
  } catch (...) {
    if (buf != nullptr && capacity > 0) buf[0] = '\0';
    return 0;
  }
}

void rl_store_close(rl_store* store) {
  if (store == nullptr) return;
  try {
    store->store->close();
  } catch (...) {
  }
}

char* rl_store_metrics(rl_store* store) {
  if (store == nullptr) return nullptr;
  try {
    const std::string text = rl::metrics_text(store->store->stats_view());
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out == nullptr) return nullptr;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  } catch (...) {
    return nullptr;
  }
}

void rl_string_free(char* text) {
  std::free(text);
}

void rl_store_free(rl_store* store) {
  rl_store_close(store);
  delete store;
}

rl_status rl_store_describe(const rl_store* store, rl_store_info* info, rl_error** err) {
  return guarded(err, [&] {
    require(store, "store");
    require(info, "info");
    check_version(info->version, RL_STORE_INFO_VERSION, "info");
    rl::Store& s = *store->store;
    info->in_process = s.in_process() ? 1 : 0;
    info->manual_clock = s.clock().is_manual() ? 1 : 0;
    info->scheme = s.scheme();
    if (info->version >= 2) {  // a version-1 struct ends at scheme
      const rl::DecidesWith d = s.decides_with();
      info->script_mode = d.script_mode;
      info->lua_mode = d.lua;
      info->module_nodes = d.module_nodes;
      info->lua_nodes = d.lua_nodes;
    }
    return RL_OK;
  });
}

const char* rl_store_display_url(const rl_store* store) {
  return store == nullptr ? nullptr : store->display_url.c_str();
}

static rl::ManualClock& manual_clock_of(rl_store* store) {
  require(store, "store");
  auto* clock = dynamic_cast<rl::ManualClock*>(&store->store->clock());
  if (clock == nullptr) rl::fail_invalid("clock: the store was not opened with clock=manual");
  return *clock;
}

rl_status rl_store_clock_set(rl_store* store, int64_t now_us, rl_error** err) {
  return guarded(err, [&] {
    manual_clock_of(store).set(now_us);
    return RL_OK;
  });
}

rl_status rl_store_clock_advance(rl_store* store, int64_t delta_us, rl_error** err) {
  return guarded(err, [&] {
    manual_clock_of(store).advance(delta_us);
    return RL_OK;
  });
}

rl_status rl_limiter_new(rl_store* store, const rl_config* cfg, rl_limiter** out, rl_error** err) {
  return guarded(err, [&] {
    require(store, "store");
    require(cfg, "cfg");
    require(out, "out");
    *out = nullptr;
    auto limiter = std::make_shared<rl::Limiter>(store->store, cfg->settings);
    *out = new rl_limiter{std::move(limiter)};
    return RL_OK;
  });
}

void rl_limiter_free(rl_limiter* limiter) {
  delete limiter;
}

size_t rl_limiter_limits(const rl_limiter* limiter, rl_limit_info* out, size_t capacity) {
  if (limiter == nullptr) return 0;
  const std::vector<rl::Rate>& rates = limiter->limiter->policy().rates;
  for (size_t i = 0; i < rates.size() && i < capacity && out != nullptr; ++i) {
    out[i] = rl_limit_info{rates[i].limit, rates[i].window_us, rates[i].burst};
  }
  return rates.size();
}

const char* rl_limiter_name(const rl_limiter* limiter) {
  return limiter == nullptr ? nullptr : limiter->limiter->policy().name.c_str();
}

rl_status rl_limiter_acquire(rl_limiter* limiter, const rl_request* request, rl_decision* decision,
                             rl_error** err) {
  return run_sync(limiter, rl::Op::acquire, request, decision, false, err);
}

rl_status rl_limiter_peek(rl_limiter* limiter, const rl_request* request, rl_decision* decision,
                          rl_error** err) {
  return run_sync(limiter, rl::Op::peek, request, decision, false, err);
}

rl_status rl_limiter_refund(rl_limiter* limiter, const rl_request* request, rl_decision* decision,
                            rl_error** err) {
  return run_sync(limiter, rl::Op::refund, request, decision, true, err);
}

rl_status rl_limiter_reset(rl_limiter* limiter, const char* key, size_t key_len, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    const rl::Outcome o = limiter->limiter->run(rl::Op::reset, key_of(key, key_len, "key"), 0);
    return finish(o, nullptr, err);
  });
}

rl_status rl_limiter_acquire_wait(rl_limiter* limiter, const rl_request* request,
                                  int64_t timeout_us, rl_decision* decision, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(decision, "decision");
    check_version(decision->version, RL_DECISION_VERSION, "decision");
    rl::Call call = call_of(request, rl::Op::acquire);
    return finish(limiter->limiter->acquire_wait(std::move(call), timeout_us), decision, err);
  });
}

rl_status rl_limiter_acquire_wait_async(rl_limiter* limiter, const rl_request* request,
                                        int64_t timeout_us, rl_callback callback, void* user_data,
                                        rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(reinterpret_cast<const void*>(callback), "callback");
    rl::Call call = call_of(request, rl::Op::acquire);
    limiter->limiter->acquire_wait_async(std::move(call), timeout_us,
                                         completion_of(callback, user_data));
    return RL_OK;
  });
}

rl_status rl_limiter_acquire_wait_start(rl_limiter* limiter, const rl_request* request,
                                        int64_t timeout_us, rl_callback callback, void* user_data,
                                        rl_wait** out, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(reinterpret_cast<const void*>(callback), "callback");
    require(out, "out");
    *out = nullptr;
    rl::Call call = call_of(request, rl::Op::acquire);
    // The handle exists before the wait starts: starting it is what may fail.
    auto* handle = new rl_wait{};
    try {
      handle->wait = limiter->limiter->acquire_wait_async(std::move(call), timeout_us,
                                                          completion_of(callback, user_data));
    } catch (...) {
      delete handle;
      throw;
    }
    *out = handle;
    return RL_OK;
  });
}

rl_status rl_request_init(rl_request* request, uint32_t version, rl_error** err) {
  return init_versioned(request, version, RL_REQUEST_VERSION, request_size(version), "request",
                        err);
}

rl_status rl_decision_init(rl_decision* decision, uint32_t version, rl_error** err) {
  return init_versioned(decision, version, RL_DECISION_VERSION, decision_size(version), "decision",
                        err);
}

rl_status rl_store_info_init(rl_store_info* info, uint32_t version, rl_error** err) {
  return init_versioned(info, version, RL_STORE_INFO_VERSION, store_info_size(version), "info",
                        err);
}

rl_status rl_store_stats_init(rl_store_stats* stats, uint32_t version, rl_error** err) {
  return init_versioned(stats, version, RL_STORE_STATS_VERSION, store_stats_size(version), "stats",
                        err);
}

rl_status rl_setting_info_init(rl_setting_info* info, uint32_t version, rl_error** err) {
  return init_versioned(info, version, RL_SETTING_INFO_VERSION, sizeof(rl_setting_info), "info",
                        err);
}

rl_status rl_text_check(const char* text, size_t length, const char* what, rl_error** err) {
  return guarded(err, [&] {
    require(what, "what");
    if (length > 0) require(text, what);
    if (length > 0 && std::memchr(text, '\0', length) != nullptr)
      rl::fail_invalid(std::string(what) + ": contains a NUL byte");
    return RL_OK;
  });
}

void rl_wait_cancel(rl_wait* wait) {
  if (wait == nullptr) return;
  try {
    wait->wait->cancel();
  } catch (...) {
    // Only memory can run out here (a refund's or a wake-up's entry); the
    // wait then ends by its own timer, as if never cancelled.
  }
}

void rl_wait_free(rl_wait* wait) {
  delete wait;
}

static std::vector<rl::Call> calls_of(const rl_request* requests, size_t count) {
  if (count == 0) rl::fail_invalid("count: is 0; a batch needs at least one request");
  if (count > RL_MAX_BATCH) {
    rl::fail_invalid("count: " + std::to_string(count) + " is more than RL_MAX_BATCH (" +
                     std::to_string(RL_MAX_BATCH) + ")");
  }
  require(requests, "requests");
  check_version(requests->version, RL_REQUEST_VERSION, "requests[0]");
  std::vector<rl::Call> calls;
  calls.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string at = "requests[" + std::to_string(i) + "]";
    const std::string key_name = at + ".key";
    const std::string timeout_name = at + ".timeout_us";
    calls.push_back(call_of(element(requests, i, request_size, "requests"), rl::Op::acquire,
                            RequestNames{at, key_name, timeout_name}));
  }
  return calls;
}

rl_status rl_limiter_acquire_batch(rl_limiter* limiter, const rl_request* requests, size_t count,
                                   rl_decision* decisions, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    auto calls = calls_of(requests, count);
    require(decisions, "decisions");
    check_version(decisions->version, RL_DECISION_VERSION, "decisions[0]");
    std::vector<rl_decision*> outs(count);
    for (size_t i = 0; i < count; ++i) outs[i] = element(decisions, i, decision_size, "decisions");
    std::vector<rl::Outcome> outcomes = limiter->limiter->acquire_batch(std::move(calls));
    for (size_t i = 0; i < count; ++i) {
      if (outcomes[i].code != rl::Code::ok)
        return report(err, outcomes[i].code, outcomes[i].message);
      fill(outs[i], outcomes[i].verdict);
    }
    return RL_OK;
  });
}

// A batch whose every request gets its own result: the requests checked as
// rl::Limiter::acquire_batch checks them (naming the index), so that what it
// throws afterwards is the store's failure of the batch, not bad input.
static std::vector<rl::Call> checked_calls_of(const rl_request* requests, size_t count) {
  std::vector<rl::Call> calls = calls_of(requests, count);
  for (size_t i = 0; i < count; ++i) {
    rl::Limiter::check_cost(rl::Op::acquire, calls[i].cost,
                            "requests[" + std::to_string(i) + "].cost");
  }
  return calls;
}

// One request's error for the caller to own; NULL when out of memory.
static rl_error* error_of(const rl::Outcome& o) noexcept {
  try {
    return new rl_error{static_cast<rl_status>(o.code), o.message};
  } catch (...) {
    return nullptr;
  }
}

// A batch that failed as a whole: every request failed with `failure`.
static std::vector<rl::Outcome> each_failed(rl::Outcome&& failure, size_t count) {
  return std::vector<rl::Outcome>(count, failure);
}

rl_status rl_limiter_acquire_batch_each(rl_limiter* limiter, const rl_request* requests,
                                        size_t count, rl_decision* decisions, rl_status* statuses,
                                        rl_error** errors, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    auto calls = checked_calls_of(requests, count);
    require(decisions, "decisions");
    check_version(decisions->version, RL_DECISION_VERSION, "decisions[0]");
    require(statuses, "statuses");
    std::vector<rl_decision*> outs(count);
    for (size_t i = 0; i < count; ++i) outs[i] = element(decisions, i, decision_size, "decisions");
    std::vector<rl::Outcome> outcomes;
    try {
      outcomes = limiter->limiter->acquire_batch(std::move(calls));
    } catch (const rl::Error& e) {
      // The call itself could not run: a sync call on a store's own thread,
      // or a closed store (where every call fails with RL_E_SHUTDOWN).
      if (e.code() == rl::Code::invalid_arg || e.code() == rl::Code::unsupported ||
          e.code() == rl::Code::shutdown)
        throw;
      outcomes = each_failed(rl::Outcome::failure(e.code(), e.what()), count);
    }
    // Nothing below throws: every request gets its result.
    for (size_t i = 0; i < count; ++i) {
      const rl::Outcome& o = outcomes[i];
      statuses[i] = static_cast<rl_status>(o.code);
      if (o.code == rl::Code::ok) fill(outs[i], o.verdict);
      if (errors != nullptr) errors[i] = o.code == rl::Code::ok ? nullptr : error_of(o);
    }
    return RL_OK;
  });
}

rl_status rl_limiter_acquire_batch_each_async(rl_limiter* limiter, const rl_request* requests,
                                              size_t count, uint32_t decision_version,
                                              rl_batch_each_callback callback, void* user_data,
                                              rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(reinterpret_cast<const void*>(callback), "callback");
    check_version(decision_version, RL_DECISION_VERSION, "decision_version");
    auto calls = checked_calls_of(requests, count);
    const size_t n = calls.size();
    limiter->limiter->acquire_batch_async(
        std::move(calls), [callback, user_data, version = decision_version, n](
                              rl::Outcome&& failure, std::vector<rl::Outcome>&& outcomes) {
          if (failure.code == rl::Code::ok && outcomes.size() != n) {
            failure = rl::Outcome::failure(rl::Code::internal,
                                           "internal error: the store answered " +
                                               std::to_string(outcomes.size()) + " of " +
                                               std::to_string(n) + " requests");
          }
          if (failure.code != rl::Code::ok) outcomes = each_failed(std::move(failure), n);
          // Zeroed rl_decisions as storage (aligned for every version, whose
          // sizes are multiples of 8), so a failed request's element is blank.
          const size_t size = decision_size(version);
          std::vector<rl_decision> storage((n * size) / sizeof(rl_decision) + 1);
          char* bytes = reinterpret_cast<char*>(storage.data());
          std::vector<rl_status> statuses(n);
          std::vector<rl_error> failures(n);
          std::vector<const rl_error*> errors(n, nullptr);
          for (size_t i = 0; i < n; ++i) {
            rl::Outcome& o = outcomes[i];
            auto* d = reinterpret_cast<rl_decision*>(bytes + i * size);
            d->version = version;
            statuses[i] = static_cast<rl_status>(o.code);
            if (o.code == rl::Code::ok) {
              fill(d, o.verdict);
            } else {
              failures[i] = rl_error{statuses[i], std::move(o.message)};
              errors[i] = &failures[i];
            }
          }
          callback(user_data, storage.data(), statuses.data(), errors.data(), n);
        });
    return RL_OK;
  });
}

rl_status rl_limiter_call_async(rl_limiter* limiter, rl_op op, const rl_request* request,
                                rl_callback callback, void* user_data, rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(reinterpret_cast<const void*>(callback), "callback");
    // A C caller may pass any int: read it as one, never as an rl_op (UB in C++).
    int op_value = 0;
    std::memcpy(&op_value, &op, sizeof op);
    if (op_value < RL_OP_ACQUIRE || op_value > RL_OP_RESET) {
      rl::fail_invalid("op: " + std::to_string(op_value) + " is not an rl_op");
    }
    rl::Call call = call_of(request, static_cast<rl::Op>(op_value));
    limiter->limiter->run_async(std::move(call), completion_of(callback, user_data));
    return RL_OK;
  });
}

rl_status rl_limiter_acquire_async(rl_limiter* limiter, const rl_request* request,
                                   rl_callback callback, void* user_data, rl_error** err) {
  return rl_limiter_call_async(limiter, RL_OP_ACQUIRE, request, callback, user_data, err);
}

// Starts a batch whose callback gets decisions of `version`: an array that
// steps by that version's size, each element carrying its version.
static rl_status start_batch_async(rl_limiter* limiter, const rl_request* requests, size_t count,
                                   uint32_t version, rl_batch_callback callback, void* user_data,
                                   rl_error** err) {
  return guarded(err, [&] {
    require(limiter, "limiter");
    require(reinterpret_cast<const void*>(callback), "callback");
    check_version(version, RL_DECISION_VERSION, "decision_version");
    auto calls = calls_of(requests, count);
    limiter->limiter->acquire_batch_async(
        std::move(calls),
        [callback, user_data, version](rl::Outcome&& failure, std::vector<rl::Outcome>&& outcomes) {
          for (const rl::Outcome& o : outcomes) {
            if (o.code != rl::Code::ok) failure = o;
          }
          if (failure.code != rl::Code::ok) {
            const rl_error e{static_cast<rl_status>(failure.code), failure.message};
            callback(user_data, e.status, nullptr, 0, &e);
            return;
          }
          // Whole rl_decisions as storage: aligned for every element, whose
          // sizes are multiples of 8.
          const size_t size = decision_size(version);
          std::vector<rl_decision> storage((outcomes.size() * size) / sizeof(rl_decision) + 1);
          char* bytes = reinterpret_cast<char*>(storage.data());
          for (size_t i = 0; i < outcomes.size(); ++i) {
            auto* d = reinterpret_cast<rl_decision*>(bytes + i * size);
            d->version = version;
            fill(d, outcomes[i].verdict);
          }
          callback(user_data, RL_OK, storage.data(), outcomes.size(), nullptr);
        });
    return RL_OK;
  });
}

// Version 2 elements: what callers built against rl.h 1.0 and 1.1 step by.
rl_status rl_limiter_acquire_batch_async(rl_limiter* limiter, const rl_request* requests,
                                         size_t count, rl_batch_callback callback, void* user_data,
                                         rl_error** err) {
  return start_batch_async(limiter, requests, count, 2, callback, user_data, err);
}

rl_status rl_limiter_acquire_batch_async_versioned(rl_limiter* limiter, const rl_request* requests,
                                                   size_t count, uint32_t decision_version,
                                                   rl_batch_callback callback, void* user_data,
                                                   rl_error** err) {
  return start_batch_async(limiter, requests, count, decision_version, callback, user_data, err);
}

}  // extern "C"
