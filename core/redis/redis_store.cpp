// redis://: state in Redis, one Lua script call per decision. The store owns
// one I/O thread (Asio) and the connections of its topology; limiters share
// them. docs/redis.md describes the behaviour, docs/key-schema.md the keys.
#include <boost/asio.hpp>
#include <mutex>
#include <optional>
#include <thread>

#include "algorithms/draw_source.h"
#include "cluster_topology.h"
#include "coalescer.h"
#include "config/url.h"
#include "dispatch.h"
#include "error_reply.h"
#include "executor.h"
#include "key_schema.h"
#include "quote.h"
#include "script_call.h"
#include "store.h"
#include "thread_name.h"
#include "topology.h"
#include "wait_for.h"

namespace rl {
namespace redis {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// Under the manual clock Redis's own clock does not move with the store's,
// so keys live at least this long in real time (tests only).
constexpr int64_t kManualClockMinTtlMs = 3600 * 1000;

Outcome shutdown_outcome() {
  return Outcome::failure(Code::shutdown, "store: closed");
}

// The I/O thread's world: it outlives the store while the thread still runs
// (the thread holds a reference), so a store freed from a callback is safe.
struct Runtime {
  asio::io_context io;
  std::unique_ptr<Topology> topology;  // destroyed before io
  std::thread::id thread_id;
};

// Filled from the parsed settings (Settings::store()), whose table holds the
// defaults.
struct StoreOptions {
  std::string prefix;
  milliseconds timeout{0};
  bool manual_clock = false;
  ScriptMode script_mode = ScriptMode::functions;
  ModuleUse module_use = ModuleUse::automatic;
  bool coalesce = false;
  bool cluster = false;      // redis+cluster:// or rediss+cluster://
  ReplicaWait replica_wait;  // min_replicas
};

bool is_cluster(const Url& url) {
  return url.scheme == "redis+cluster" || url.scheme == "rediss+cluster";
}

// rediss://: TLS, with the settings of its files and checks.
TlsOptions tls_options(const Url& url, const Settings& settings) {
  TlsOptions t;
  t.enabled = url.scheme == "rediss" || url.scheme == "rediss+cluster";
  for (const char* key : {"tls_ca_file", "tls_ca_dir", "tls_cert_file", "tls_key_file",
                          "tls_server_name", "tls_insecure_skip_verify"}) {
    if (!t.enabled && settings.has(key)) {
      fail_invalid(std::string(key) + ": only rediss:// and rediss+cluster:// use TLS");
    }
  }
  const TlsConfig& c = settings.store().redis.tls;
  t.ca_file = c.ca_file;
  t.ca_dir = c.ca_dir;
  t.cert_file = c.cert_file;
  t.key_file = c.key_file;
  t.server_name = c.server_name;
  t.verify = !c.insecure_skip_verify;
  return t;
}

// redis+sentinel://sentinel[,sentinel...]/master-name[/db]: the URL's
// credentials are the master's, sentinel_user and sentinel_password the
// sentinels'.
SentinelOptions sentinel_options(const Url& url, const Settings& settings, std::string& path) {
  SentinelOptions s;
  const bool sentinel = url.scheme == "redis+sentinel";
  for (const char* key : {"sentinel_user", "sentinel_password"}) {
    if (!sentinel && settings.has(key)) {
      fail_invalid(std::string(key) + ": only redis+sentinel:// asks sentinels");
    }
  }
  if (!sentinel) return s;
  if (url.endpoints.empty()) fail_invalid("url: redis+sentinel:// needs the sentinels' host:port");
  for (const Endpoint& e : url.endpoints) s.sentinels.push_back({e.host, e.port});
  const size_t slash = path.find('/');
  s.master_name = path.substr(0, slash);
  path = slash == std::string::npos ? std::string() : path.substr(slash + 1);
  if (s.master_name.empty()) {
    fail_invalid(
        "url: redis+sentinel:// needs the master's name as its path: "
        "redis+sentinel://host:26379/mymaster");
  }
  s.user = settings.store().redis.sentinel_user;
  s.password = settings.store().redis.sentinel_password;
  if (!s.user.empty() && s.password.empty())
    fail_invalid("sentinel_user: is set without sentinel_password");
  return s;
}

// Parses "[user:]password@host:port/db" and the store settings.
NodeOptions node_options(const Url& url, const Settings& settings) {
  NodeOptions o;
  std::string path = url.path;
  o.sentinel = sentinel_options(url, settings, path);
  o.tls = tls_options(url, settings);
  if (url.endpoints.size() > 1 && o.sentinel.sentinels.empty() && !is_cluster(url)) {
    fail_invalid(
        "url: redis:// takes one host; redis+cluster:// and redis+sentinel:// take several");
  }
  if (!url.endpoints.empty() && o.sentinel.sentinels.empty()) {
    o.host = url.endpoints[0].host;
    o.port = url.endpoints[0].port;
  }
  o.user = url.user;
  o.password = url.password;
  if (!o.user.empty() && o.password.empty())
    fail_invalid("url: user " + quote(o.user) + " has no password");
  if (!path.empty() && is_cluster(url)) {
    fail_invalid("url: redis+cluster:// has no database to choose (a cluster has only 0)");
  }
  if (!path.empty()) o.db = static_cast<int>(parse_count("url: database", path, 0, 1 << 20));
  const RedisConfig& c = settings.store().redis;
  o.connect_timeout = milliseconds(c.connect_timeout_ms);
  o.reconnect_max = milliseconds(c.reconnect_max_ms);
  o.liveness_timeout = milliseconds(c.liveness_timeout_ms);
  return o;
}

// {allowed, limit, remaining, retry_after_us, reset_after_us, limit_index
// [, next_retry_after_us [, suppression factor in 2^-24 units]]}: lua/'s
// reply, one string of these integers each 8 bytes little-endian, or 5 of
// them for a decision of one limit, which leaves out its limit (`only_limit`)
// and index (see lua/common.lua); or an array of the integers.
Verdict verdict_of(const Reply& r, int64_t only_limit, bool& ok) {
  Verdict v;
  int64_t n[8] = {};
  size_t count = 0;
  if (r.type == Reply::Type::string) {
    count = r.text.size() / 8;
    ok = r.text.size() % 8 == 0 && count <= 8;
    for (size_t i = 0; ok && i < count; ++i) {
      uint64_t u = 0;
      for (int b = 7; b >= 0; --b) u = u << 8 | static_cast<unsigned char>(r.text[i * 8 + b]);
      n[i] = static_cast<int64_t>(u);
    }
    if (ok && count == 5 && only_limit >= 0) {  // {allowed, remaining, retry, reset, next_retry}
      v.allowed = n[0] != 0;
      v.limit = only_limit;
      v.remaining = n[1];
      v.retry_after_us = n[2];
      v.reset_after_us = n[3];
      v.next_retry_after_us = n[4];
      return v;
    }
  } else {
    ok = r.type == Reply::Type::array && r.elements.size() <= 8;
    count = r.elements.size();
    for (size_t i = 0; ok && i < count; ++i) {
      ok = r.elements[i].type == Reply::Type::integer;
      n[i] = r.elements[i].integer;
    }
  }
  ok = ok && count >= 6 && count <= 8;
  if (!ok) return v;
  v.allowed = n[0] != 0;
  v.limit = n[1];
  v.remaining = n[2];
  v.retry_after_us = n[3];
  v.reset_after_us = n[4];
  v.limit_index = static_cast<int>(n[5]);
  if (count >= 7) v.next_retry_after_us = n[6];
  if (count == 8) v.suppression_factor = static_cast<double>(n[7]) / Suppressed::kScale;
  return v;
}

// An error reply of a script call, as a status: a server that is loading,
// busy or read-only may come back; anything else is an error of the backend.
Outcome outcome_of_error(const std::string& node, const std::string& text) {
  // The server's text, bounded and escaped like any quoted input.
  return Outcome::failure(code_of_error_reply(text), node + ": " + quote(text, 200));
}

class RedisStore;

// One policy over the store: its key shape, scripts and limit arguments,
// prepared once.
class RedisBackend final : public Backend, public std::enable_shared_from_this<RedisBackend> {
 public:
  RedisBackend(std::shared_ptr<RedisStore> store, const Policy& policy);

  Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) override;
  void run_async(Call call, Completion done) override;
  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override;
  std::vector<Outcome> run_batch(std::vector<Call> calls) override;
  NodeId node_of(std::string_view key) override;

 private:
  ScriptCall script_call(Op op, std::string_view key, int64_t cost,
                         const LeaseArgs& lease = {}) const;
  // run and run_async: the key is read here, never copied into a Call.
  void submit_one(Op op, std::string_view key, int64_t cost, int64_t timeout_us, Completion done,
                  const LeaseArgs& lease = {});
  Outcome outcome_of(CallResult&& result, int64_t timeout_us) const;

  std::shared_ptr<RedisStore> store_;
  Algorithm algorithm_;
  KeyShape keys_;
  std::string limits_arg_;   // the smallest TTL, then 6 values per limit (lua/common.lua)
  int64_t only_limit_ = -1;  // a policy of one limit: its limit, which its replies leave out
  const std::unique_ptr<DrawSource> draws_;  // suppressed only
  const int64_t factor_reuse_us_;
};

class RedisStore final : public Store, public std::enable_shared_from_this<RedisStore> {
 public:
  RedisStore(NodeOptions node, std::vector<ClusterNode> cluster_seeds, StoreOptions options,
             std::unique_ptr<Clock> clock)
      : options_(std::move(options)),
        one_node_(node.sentinel.sentinels.empty() ? node.host + ":" + std::to_string(node.port)
                                                  : node.sentinel.master_name),
        clock_(std::move(clock)),
        runtime_(std::make_shared<Runtime>()),
        scripts_(options_.script_mode, options_.replica_wait),
        modules_(options_.module_use, scripts_),
        coalescer_(modules_) {
    if (options_.cluster) {
      runtime_->topology = std::make_unique<ClusterTopology>(runtime_->io, std::move(node),
                                                             std::move(cluster_seeds));
    } else {
      runtime_->topology =
          std::make_unique<StandaloneTopology>(Connection::create(runtime_->io, std::move(node)));
    }
    dispatcher_.emplace(runtime_->io, *runtime_->topology, modules_,
                        options_.coalesce ? &coalescer_ : nullptr);
    thread_ = std::thread([runtime = runtime_] {
      name_this_thread("rl-io");
      auto work = asio::make_work_guard(runtime->io);
      runtime->io.run();
    });
    runtime_->thread_id = thread_.get_id();
  }

  ~RedisStore() override { close(); }

  std::shared_ptr<Backend> backend_for(const Policy& policy) override {
    return std::make_shared<RedisBackend>(shared_from_this(), policy);
  }

  void close() override {
    closed_.store(true, std::memory_order_release);
    runtime_->topology->for_each_node([](Connection& c) { c.refuse_new(); });
    // The nodes first: calls they fail may wait to go again, which the
    // dispatcher then fails.
    auto finish = [runtime = runtime_, dispatcher = &*dispatcher_] {
      runtime->topology->for_each_node([](Connection& c) { c.shut_down(); });
      dispatcher->shut_down();
      runtime->io.stop();
    };
    if (on_io_thread()) {  // from a callback: the loop ends when it returns
      finish();
      std::unique_lock lock(close_mutex_, std::try_to_lock);
      if (lock.owns_lock() && thread_.joinable()) thread_.detach();  // else its closer joins it
      timers_.shutdown();
      return;
    }
    std::lock_guard lock(close_mutex_);
    if (thread_.joinable()) {  // else closed before
      asio::post(runtime_->io, finish);
      thread_.join();
    }
    // After the I/O thread: its last completions may still set timers.
    timers_.shutdown();
  }

  Clock& clock() override { return *clock_; }

  // The single way decisions reach Redis. Throws Code::shutdown after close.
  // timeout_us (0: none) may only bring the store's deadline forward.
  void submit(std::vector<ScriptCall> calls, int64_t timeout_us, ResultsHandler done) {
    if (closed_.load(std::memory_order_acquire)) throw Error(Code::shutdown, "store: closed");
    const Deadline deadline = std::chrono::steady_clock::now() + effective_timeout(timeout_us);
    dispatcher_->submit(std::move(calls), deadline, std::move(done));
  }
  // One call, as submit.
  void submit_one(ScriptCall call, int64_t timeout_us, ResultHandler done) {
    if (closed_.load(std::memory_order_acquire)) throw Error(Code::shutdown, "store: closed");
    const Deadline deadline = std::chrono::steady_clock::now() + effective_timeout(timeout_us);
    dispatcher_->submit_one(std::move(call), deadline, std::move(done));
  }

  std::chrono::microseconds effective_timeout(int64_t timeout_us) const {
    const std::chrono::microseconds store_timeout = options_.timeout;
    if (timeout_us <= 0) return store_timeout;
    return std::min(store_timeout, std::chrono::microseconds(timeout_us));
  }

  bool post_after(int64_t delay_us, Executor::Task task) override {
    return !closed_.load(std::memory_order_acquire) &&
           timers_.post_after(std::chrono::microseconds(delay_us), std::move(task));
  }
  bool on_own_thread() const override { return on_io_thread() || timers_.on_own_thread(); }
  const char* scheme() const override { return "redis"; }
  DecidesWith decides_with() const override { return modules_.decides_with(); }
  bool in_process() const override { return false; }
  bool closed() const override { return closed_.load(std::memory_order_acquire); }

  bool on_io_thread() const { return std::this_thread::get_id() == runtime_->thread_id; }
  const StoreOptions& options() const { return options_; }

  // Cluster: the connection of the master `redis_key`'s slot has now.
  NodeId cluster_node_of(const std::string& redis_key) {
    uint32_t slot = 0;
    return &runtime_->topology->node_for(redis_key, slot);
  }
  std::vector<NodeInfo> nodes() override {
    if (!options_.cluster) return {NodeInfo{nullptr, one_node_}};
    std::vector<NodeInfo> out;
    for (const auto& [connection, node] : runtime_->topology->masters())
      out.push_back({connection, node.host + ":" + std::to_string(node.port)});
    return out;
  }

  // The first connection attempts, then (Cluster) the first slot map.
  Failure wait_connected(milliseconds timeout) {
    Failure first;
    runtime_->topology->for_each_node([&](Connection& c) {
      if (Failure f = c.wait_first_attempt(timeout); f && !first) first = std::move(f);
    });
    if (first) return first;
    return runtime_->topology->wait_ready(timeout);
  }

 private:
  const StoreOptions options_;
  const std::string one_node_;  // the address of a store of one node (its stats' name)
  std::unique_ptr<Clock> clock_;
  std::shared_ptr<Runtime> runtime_;
  ScriptRunner scripts_;
  ModuleRunner modules_;  // the module where a node has it (script_mode), else scripts_
  Coalescer coalescer_;
  std::optional<Dispatcher> dispatcher_;  // made once the topology is
  std::thread thread_;
  std::atomic<bool> closed_{false};
  std::mutex close_mutex_;
  Executor timers_;  // acquire_wait's sleeps; its thread starts with the first
};

RedisBackend::RedisBackend(std::shared_ptr<RedisStore> store, const Policy& policy)
    : store_(std::move(store)),
      algorithm_(policy.algorithm),
      keys_(key_shape(store_->options().prefix, policy)),
      draws_(policy.algorithm == Algorithm::suppressed
                 ? std::make_unique<DrawSource>(policy.seed, store_->clock().is_manual())
                 : nullptr),
      factor_reuse_us_(policy.factor_reuse_us) {
  limits_arg_ = store_->options().manual_clock ? std::to_string(kManualClockMinTtlMs) : "0";
  if (policy.rates.size() == 1) only_limit_ = policy.rates[0].limit;
  for (const Rate& r : policy.rates) {
    for (int64_t v :
         {r.limit, r.window_us, r.burst, r.limit_reduced, r.window_reduced, r.granularity_us}) {
      limits_arg_ += ' ';
      limits_arg_ += std::to_string(v);
    }
  }
}

ScriptCall RedisBackend::script_call(Op op, std::string_view key, int64_t cost,
                                     const LeaseArgs& lease) const {
  // Filled in place: an initializer list would copy the key.
  ScriptCall c{algorithm_, op, {}, {}, op != Op::peek};
  c.keys.push_back(keys_.key_for(key));
  Clock& clock = store_->clock();
  c.args.reserve(3);
  c.args.push_back(clock.is_manual() ? std::to_string(clock.now_us()) : std::string());
  // suppressed: "<cost> <draw> <factor_reuse_us>" (lua/algorithms/suppressed.lua),
  // in the cost's place so that a coalesced batch carries it unchanged.
  std::string cost_arg = std::to_string(cost);
  if (draws_) {
    cost_arg += ' ';
    cost_arg += std::to_string(draws_->next());
    cost_arg += ' ';
    cost_arg += std::to_string(factor_reuse_us_);
  }
  // lease: "<units> <hold_us>"; release: "<units> <granted_at> <slice>"
  // (lua/common.lua, lease_call).
  if (op == Op::lease) {
    cost_arg += ' ';
    cost_arg += std::to_string(lease.hold_us);
  } else if (op == Op::release) {
    cost_arg += ' ';
    cost_arg += std::to_string(lease.granted_at);
    cost_arg += ' ';
    cost_arg += std::to_string(lease.slice);
  }
  c.args.push_back(std::move(cost_arg));
  c.args.push_back(limits_arg_);
  return c;
}

// Every call's result passes through here: the one place where fail-open
// and local fallback (a later issue) will turn a failure into a decision.
Outcome RedisBackend::outcome_of(CallResult&& result, int64_t timeout_us) const {
  Failure& failure = result.failure;
  if (failure) {
    if (failure.code == Code::timeout) {
      const int64_t store_us = store_->options().timeout.count() * 1000;
      failure.message +=
          timeout_us > 0 && timeout_us < store_us
              ? " (request timeout_us=" + std::to_string(timeout_us) + ")"
              : " (timeout_ms=" + std::to_string(store_->options().timeout.count()) + ")";
    }
    return Outcome::failure(failure.code, std::move(failure.message));
  }
  const std::string& node = result.node->name();
  if (result.reply.is_error()) return outcome_of_error(node, result.reply.text);
  Outcome o;
  bool ok = false;
  o.verdict = verdict_of(result.reply, only_limit_, ok);
  if (!ok) return Outcome::failure(Code::backend_error, node + ": unexpected script reply");
  return o;
}

// A sync call from an rl callback would wait for the thread it runs on.
constexpr const char* kSyncOnIoThread =
    "store: a synchronous call from an rl callback would wait for itself; use the async call";

Outcome RedisBackend::run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) {
  if (store_->on_io_thread()) return Outcome::failure(Code::unsupported, kSyncOnIoThread);
  try {
    return wait_for<Outcome>([&](auto done) {
      SyncCall sync;  // on an idle connection this thread reads its own reply
      submit_one(op, key, cost, timeout_us, std::move(done));
    });
  } catch (const Error& e) {
    if (e.code() == Code::shutdown) return shutdown_outcome();
    throw;
  }
}

std::vector<Outcome> RedisBackend::run_batch(std::vector<Call> calls) {
  if (store_->on_io_thread()) throw Error(Code::unsupported, kSyncOnIoThread);
  using Result = std::pair<Outcome, std::vector<Outcome>>;  // failure, outcomes
  Result r = wait_for<Result>([&](auto done) {
    SyncCall sync;
    run_batch_async(std::move(calls), [done](Outcome&& failure, std::vector<Outcome>&& outcomes) {
      Result value{std::move(failure), std::move(outcomes)};
      done(std::move(value));
    });
  });
  if (r.first.code != Code::ok) throw Error(r.first.code, r.first.message);
  return std::move(r.second);
}

void RedisBackend::run_async(Call call, Completion done) {
  submit_one(call.op, call.key, call.cost, call.timeout_us, std::move(done),
             LeaseArgs{call.granted_at_us, call.lease_slice, call.lease_hold_us});
}

void RedisBackend::submit_one(Op op, std::string_view key, int64_t cost, int64_t timeout_us,
                              Completion done, const LeaseArgs& lease) {
  // The completion owns the backend: the limiter may be freed before it runs.
  store_->submit_one(
      script_call(op, key, cost, lease), timeout_us,
      [self = shared_from_this(), done = std::move(done), timeout_us](CallResult&& result) {
        done(self->outcome_of(std::move(result), timeout_us));
      });
}

NodeId RedisBackend::node_of(std::string_view key) {
  if (!store_->options().cluster) return nullptr;
  return store_->cluster_node_of(keys_.key_for(key));
}

// All calls of a batch leave in one write per node, so they share one
// deadline: the earliest any of them asked for. Each gets its own outcome
// (on Cluster one node may fail while the others answer).
void RedisBackend::run_batch_async(std::vector<Call> calls, BatchCompletion done) {
  std::vector<ScriptCall> scripts;
  scripts.reserve(calls.size());
  int64_t timeout_us = 0;
  for (const Call& c : calls) {
    scripts.push_back(script_call(c.op, c.key, c.cost,
                                  LeaseArgs{c.granted_at_us, c.lease_slice, c.lease_hold_us}));
    if (c.timeout_us > 0 && (timeout_us == 0 || c.timeout_us < timeout_us))
      timeout_us = c.timeout_us;
  }
  store_->submit(
      std::move(scripts), timeout_us,
      [self = shared_from_this(), done = std::move(done),
       timeout_us](std::vector<CallResult>&& results) {
        // One node that failed as a whole: the batch's failure, as before.
        const bool one_failure =
            results[0].failure && std::all_of(results.begin(), results.end(), [&](auto& r) {
              return r.node == results[0].node && r.failure.code == results[0].failure.code;
            });
        if (one_failure) return done(self->outcome_of(std::move(results[0]), timeout_us), {});
        std::vector<Outcome> outcomes;
        outcomes.reserve(results.size());
        for (CallResult& r : results)
          outcomes.push_back(self->outcome_of(std::move(r), timeout_us));
        done(Outcome{}, std::move(outcomes));
      });
}

}  // namespace
}  // namespace redis

std::shared_ptr<Store> open_redis_store(const Url& url, const Settings& settings,
                                        std::unique_ptr<Clock> clock) {
  using namespace redis;
  NodeOptions node = node_options(url, settings);
  StoreOptions options;
  const RedisConfig& c = settings.store().redis;
  options.prefix = c.prefix;
  options.timeout = milliseconds(c.timeout_ms);
  options.script_mode = c.use_functions ? ScriptMode::functions : ScriptMode::scripts;
  options.module_use = c.use_module == "auto"     ? ModuleUse::automatic
                       : c.use_module == "module" ? ModuleUse::required
                                                  : ModuleUse::off;
  options.coalesce = c.coalesce;
  if (settings.has("min_replicas_timeout_ms") && c.min_replicas == 0)
    fail_invalid("min_replicas_timeout_ms: is set without min_replicas");
  options.replica_wait = {c.min_replicas, milliseconds(c.min_replicas_timeout_ms)};
  options.manual_clock = clock->is_manual();
  options.cluster = is_cluster(url);
  std::vector<ClusterNode> seeds;
  if (options.cluster) {
    if (url.endpoints.empty()) fail_invalid("url: redis+cluster:// needs at least one host:port");
    for (const Endpoint& e : url.endpoints) seeds.push_back({e.host, e.port});
  }
  const milliseconds connect_timeout = node.connect_timeout;
  auto store = std::make_shared<RedisStore>(std::move(node), std::move(seeds), std::move(options),
                                            std::move(clock));
  // Wrong credentials or database fail the open; a server that is down does
  // not: calls fail until it is back.
  Failure first = store->wait_connected(connect_timeout + milliseconds(100));
  if (first.code == Code::auth || first.code == Code::backend_error) {
    store->close();
    throw Error(first.code, first.message);
  }
  return store;
}

}  // namespace rl
