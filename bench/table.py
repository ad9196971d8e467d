#!/usr/bin/env python3
"""The rows of bench/run's table: which measurement each needs, how rl and
its peer are read from the benches' JSON lines, and the goal.

  table.py sources ROW_PREFIXES   the measurements the rows need, one a line
  table.py rows                   every row id and figure
  table.py load RESULTS.jsonl     the run's load average line
  table.py print ROW_PREFIXES HEADER.txt RESULTS.jsonl...
                                  the table (Markdown), after the header; one
                                  RESULTS file per run: with several, each row
                                  shows the medians and the ratio's spread
ROW_PREFIXES is a comma-separated list ("" for every row); a row is kept when
its id starts with one of them. A results file's "load" lines (load.py
record) give the load average at the start and end of its run: the title
says "noisy" when a run started above load.py's limit.
"""
import json
import statistics
import sys

import load


def one(results, **match):
    """The first result whose fields equal `match`, or None."""
    for r in results:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def field(name, **match):
    def read(results):
        r = one(results, **match)
        return None if r is None else r.get(name)
    return read


def lease_field(name, backend, lease, algorithm="fixed_window"):
    return field(name, bench="lease_load", backend=backend, lease=lease, algorithm=algorithm)


def per_entry(name, entries):
    def read(results):
        r = one(results, bench="sliding_log", entries=entries)
        return None if r is None or r.get(name) is None else r[name] / entries
    return read


def best(*readers):
    def read(results):
        values = [v for v in (r(results) for r in readers) if v is not None]
        return max(values) if values else None
    return read


def least(*readers):
    """The smallest of the measured values (the cheapest peer)."""
    def read(results):
        values = [v for v in (r(results) for r in readers) if v is not None]
        return min(values) if values else None
    return read


US, NS, RATE, BYTES = "us", "ns", "/s", "B"

# id, figure, unit, measurement(s), rl, peer, goal: (comparison, ratio) or None.
ROWS = [
    ("sliding_log_cpu_100", "sliding_log Redis CPU/decision, 100 live entries; peer: 10 entries",
     US, "sliding_log", field("redis_us_per_decision", bench="sliding_log", entries=100),
     field("redis_us_per_decision", bench="sliding_log", entries=10), None),
    ("sliding_log_cpu_1000", "sliding_log Redis CPU/decision, 1,000 live entries; peer: 10 entries",
     US, "sliding_log", field("redis_us_per_decision", bench="sliding_log", entries=1000),
     field("redis_us_per_decision", bench="sliding_log", entries=10), None),
    ("sliding_log_cpu_10000", "sliding_log Redis CPU/decision, 10,000 live entries; peer: 10 entries",
     US, "sliding_log_10000", field("redis_us_per_decision", bench="sliding_log", entries=10000),
     field("redis_us_per_decision", bench="sliding_log", entries=10), ("<=", 2)),
    ("sliding_log_memory_1000", "sliding_log MEMORY USAGE per entry, 1,000 entries; peer: sorted set",
     BYTES, "sliding_log", per_entry("memory_bytes", 1000), per_entry("zset_memory_bytes", 1000), None),
    ("sliding_log_memory_10000", "sliding_log MEMORY USAGE per entry, 10,000 entries; peer: sorted set",
     BYTES, "sliding_log_10000", per_entry("memory_bytes", 10000), per_entry("zset_memory_bytes", 10000),
     None),
    ("redis_cpu_gcra_1", "Redis CPU/decision, gcra, Go 1 goroutine; peer: redis_rate",
     US, "go", field("redis_us_per_decision", bench="go", library="rl", goroutines=1),
     field("redis_us_per_decision", bench="go", library="redis_rate", goroutines=1), ("<=", 1)),
    ("redis_cpu_gcra_200", "Redis CPU/decision, gcra, Go 200 goroutines; peer: redis_rate",
     US, "go", field("redis_us_per_decision", bench="go", library="rl", goroutines=200),
     field("redis_us_per_decision", bench="go", library="redis_rate", goroutines=200), ("<=", 0.5)),
    ("redis_cpu_fixed_window_1", "Redis CPU/decision, fixed_window, Node 1 in flight; peer: rate-limiter-flexible",
     US, "node_sequential",
     field("redis_us_per_decision", bench="node", phase="sequential", contender="rl fixed_window"),
     field("redis_us_per_decision", bench="node", phase="sequential", contender="rate-limiter-flexible"),
     ("<=", 1)),
    ("redis_cpu_fixed_window_200", "Redis CPU/decision, fixed_window, Node 200 in flight; peer: rate-limiter-flexible",
     US, "node_inflight",
     field("redis_us_per_decision", bench="node", phase="inflight", contender="rl fixed_window"),
     field("redis_us_per_decision", bench="node", phase="inflight", contender="rate-limiter-flexible"),
     ("<=", 0.5)),
    ("redis_main_cpu_fixed_window_1", "Redis main thread CPU time/decision (INFO cpu, getrusage), fixed_window, Node 1 in "
     "flight; peer: rate-limiter-flexible (a check on the commandstats row)",
     US, "node_sequential",
     field("redis_main_cpu_us_per_decision", bench="node", phase="sequential", contender="rl fixed_window"),
     field("redis_main_cpu_us_per_decision", bench="node", phase="sequential", contender="rate-limiter-flexible"),
     None),
    ("redis_main_cpu_fixed_window_200", "Redis main thread CPU time/decision (INFO cpu, getrusage), fixed_window, Node 200 "
     "in flight; peer: rate-limiter-flexible (a check on the commandstats row)",
     US, "node_inflight",
     field("redis_main_cpu_us_per_decision", bench="node", phase="inflight", contender="rl fixed_window"),
     field("redis_main_cpu_us_per_decision", bench="node", phase="inflight", contender="rate-limiter-flexible"),
     None),
    ("node_gcra_rate", "Node 200 in flight, decisions/s, rl gcra; peer: rate-limiter-flexible",
     RATE, "node_inflight", field("per_second", bench="node", phase="inflight", contender="rl gcra"),
     field("per_second", bench="node", phase="inflight", contender="rate-limiter-flexible"), (">=", 1.5)),
    ("node_gcra_p99", "Node 200 in flight, p99, rl gcra; peer: rate-limiter-flexible",
     US, "node_inflight", field("p99_us", bench="node", phase="inflight", contender="rl gcra"),
     field("p99_us", bench="node", phase="inflight", contender="rate-limiter-flexible"), ("<", 1)),
    ("node_fixed_window_rate", "Node 200 in flight, decisions/s, rl fixed_window; peer: rate-limiter-flexible",
     RATE, "node_inflight", field("per_second", bench="node", phase="inflight", contender="rl fixed_window"),
     field("per_second", bench="node", phase="inflight", contender="rate-limiter-flexible"), (">=", 1.5)),
    ("node_fixed_window_p99", "Node 200 in flight, p99, rl fixed_window; peer: rate-limiter-flexible",
     US, "node_inflight", field("p99_us", bench="node", phase="inflight", contender="rl fixed_window"),
     field("p99_us", bench="node", phase="inflight", contender="rate-limiter-flexible"), ("<", 1)),
    ("go_64_rate", "Go 64 goroutines, decisions/s, gcra; peer: redis_rate",
     RATE, "go", field("per_second", bench="go", library="rl", goroutines=64),
     field("per_second", bench="go", library="redis_rate", goroutines=64), (">=", 1.5)),
    ("go_1_p50", "Go 1 goroutine, p50, gcra; peer: redis_rate",
     US, "go", field("p50_us", bench="go", library="rl", goroutines=1),
     field("p50_us", bench="go", library="redis_rate", goroutines=1), ("<=", 1.2)),
    ("c_p50", "C sync caller, p50, gcra; peer: redis-benchmark -c 1 -P 1, same command",
     US, "c", field("rl_p50_us", bench="c_latency", algorithm="gcra"),
     field("peer_p50_us", bench="c_latency", algorithm="gcra"), ("<=", 1.1)),
    ("c_replay_cpu", "C sync caller, Redis CPU/decision, gcra; peer: the replay (a check: about 1x)",
     US, "c", field("rl_redis_us_per_decision", bench="c_latency", algorithm="gcra"),
     field("peer_redis_us_per_call", bench="c_latency", algorithm="gcra"), None),
    ("deny_cache_store_calls", "deny cache: store calls per decision, one key at 20x its limit, 64 paced callers; peer: cache off",
     "calls", "deny_cache", field("store_calls_per_decision", bench="deny_cache", round=1, cache="on"),
     field("store_calls_per_decision", bench="deny_cache", round=1, cache="off"), ("<=", 0.1)),
    ("deny_cache_admitted", "deny cache: admitted in the same run; peer: cache off (a check: about 1x)",
     "decisions", "deny_cache", field("admitted", bench="deny_cache", round=1, cache="on"),
     field("admitted", bench="deny_cache", round=1, cache="off"), None),
] + [
    # Leases on one hot key, 8 processes of one caller (tests/load, rl_lease_load cost): on and
    # off in the same run, through the Lua library and the module.
    row
    for backend, name in [("lua", ""), ("module", "_module")]
    for row in [
        (f"lease_store_calls{name}", f"leases, {backend}: store calls/decision, one hot key, 8 processes; peer: leases off",
         "calls", "lease", lease_field("store_calls_per_decision", backend, "auto"),
         lease_field("store_calls_per_decision", backend, "off"), ("<=", 0.02, "absolute")),
        (f"lease_rate{name}", f"leases, {backend}: decisions/s, one hot key, 8 processes; peer: leases off",
         RATE, "lease", lease_field("decisions_per_s", backend, "auto"),
         lease_field("decisions_per_s", backend, "off"), (">=", 3)),
        (f"lease_redis_cpu{name}", f"leases, {backend}: Redis CPU/decision, one hot key, 8 processes; peer: leases off",
         US, "lease", lease_field("redis_us_per_decision", backend, "auto"),
         lease_field("redis_us_per_decision", backend, "off"), None),
        (f"lease_p99{name}", f"leases, {backend}: p99 of a call decided from a slice, 8 processes; peer: a call, leases off",
         US, "lease", lease_field("slice_p99_us", backend, "auto"),
         lease_field("p99_us", backend, "off"), ("<=", 5, "absolute")),
    ]
] + [
    # The same for gcra, whose slices the store holds out of the bucket (a
    # release per slice, used up or not), and for sliding_log, which records
    # a slice at its lease's end.
    row
    for algo in ["gcra", "sliding_log"]
    for backend, name in [("lua", f"_{algo}"), ("module", f"_{algo}_module")]
    for row in [
        (f"lease_store_calls{name}", f"leases, {algo}, {backend}: store calls/decision, one hot key, 8 processes; peer: leases off",
         "calls", "lease", lease_field("store_calls_per_decision", backend, "auto", algo),
         lease_field("store_calls_per_decision", backend, "off", algo), ("<=", 0.02, "absolute")),
        (f"lease_rate{name}", f"leases, {algo}, {backend}: decisions/s, one hot key, 8 processes; peer: leases off",
         RATE, "lease", lease_field("decisions_per_s", backend, "auto", algo),
         lease_field("decisions_per_s", backend, "off", algo), (">=", 3)),
        (f"lease_redis_cpu{name}", f"leases, {algo}, {backend}: Redis CPU/decision, one hot key, 8 processes; peer: leases off",
         US, "lease", lease_field("redis_us_per_decision", backend, "auto", algo),
         lease_field("redis_us_per_decision", backend, "off", algo), None),
        (f"lease_p99{name}", f"leases, {algo}, {backend}: p99 of a call decided from a slice, 8 processes; peer: a call, leases off",
         US, "lease", lease_field("slice_p99_us", backend, "auto", algo),
         lease_field("p99_us", backend, "off", algo), ("<=", 5, "absolute")),
    ]
] + [
    ("deny_cache_allowed_p50", "deny cache: p50 of an allowed caller beside the attack; peer: cache off",
     US, "deny_cache", field("allowed_p50_us", bench="deny_cache", round=1, cache="on"),
     field("allowed_p50_us", bench="deny_cache", round=1, cache="off"), ("<=", 1.1)),
    ("cluster_cpu_1", "Cluster, Redis CPU/decision (sum over 3 masters), gcra, 1 caller, 4,096 keys; peer: one server",
     US, "cluster", field("redis_us_per_decision", bench="cluster", deployment="cluster", callers=1, keys=4096),
     field("redis_us_per_decision", bench="cluster", deployment="standalone", callers=1, keys=4096), ("<=", 1)),
    ("cluster_cpu_64", "Cluster, Redis CPU/decision (sum over 3 masters), gcra, 64 callers, 4,096 keys; peer: one server",
     US, "cluster", field("redis_us_per_decision", bench="cluster", deployment="cluster", callers=64, keys=4096),
     field("redis_us_per_decision", bench="cluster", deployment="standalone", callers=64, keys=4096), ("<=", 1)),
    ("cluster_cpu_one_key", "Cluster, Redis CPU/decision, 1 caller, one key (one master); peer: one server",
     US, "cluster", field("redis_us_per_decision", bench="cluster", deployment="cluster", callers=1, keys=1),
     field("redis_us_per_decision", bench="cluster", deployment="standalone", callers=1, keys=1), ("<=", 1.1)),
    ("cluster_cpu_replica", "A master with a replica, Redis CPU/decision, 1 caller; peer: one server (a check: about 1x)",
     US, "cluster", field("redis_us_per_decision", bench="cluster", deployment="replicated", callers=1, keys=4096),
     field("redis_us_per_decision", bench="cluster", deployment="standalone", callers=1, keys=4096), None),
    ("cluster_balance", "Cluster, the busiest master's share of 4,096 keys' decisions; peer: an even third",
     "share", "cluster", field("largest_master_share", bench="cluster", deployment="cluster", callers=1, keys=4096),
     lambda results: 1 / 3, ("<=", 1.1)),
    ("cluster_batch_64", "Cluster, decisions per FCALL (one node's coalesced calls), 64 callers, 4,096 keys; peer: one server",
     "decisions", "cluster", field("decisions_per_script_call", bench="cluster", deployment="cluster", callers=64, keys=4096),
     field("decisions_per_script_call", bench="cluster", deployment="standalone", callers=64, keys=4096), None),
    ("cluster_bytes_1", "Cluster, bytes from the client per decision (sum over 3 masters), 1 caller; peer: one server",
     BYTES, "cluster", field("bytes_in_per_decision", bench="cluster", deployment="cluster", callers=1, keys=4096),
     field("bytes_in_per_decision", bench="cluster", deployment="standalone", callers=1, keys=4096), None),
    ("cluster_balance_64", "Cluster, the busiest master's share of 4,096 keys' decisions, 64 callers; peer: an even third",
     "share", "cluster", field("largest_master_share", bench="cluster", deployment="cluster", callers=64, keys=4096),
     lambda results: 1 / 3, ("<=", 1.1)),
    ("node_try_acquire", "Node tryAcquire on memory://, decisions/s; peer: RateLimiterMemory (best of 1 and 200 in flight)",
     RATE, "node_memory", field("per_second", bench="node", phase="memory", contender="rl tryAcquire"),
     best(field("per_second", bench="node", phase="memory", contender="RateLimiterMemory sequential"),
          field("per_second", bench="node", phase="memory", contender="RateLimiterMemory 200 in flight")),
     (">=", 2)),
]


def java(name, library, threads, keys):
    return field(name, bench="java", library=library, threads=threads, keys=keys)


# The Java bench (bench/java): rl beside Bucket4j and the Lettuce sliding log.
JAVA_LOG, BUCKET4J = "lettuce sliding log", "bucket4j"
ROWS += [
    (f"java_{row_id}", f"Java {figure}; peer: {peer_name}", unit, "java",
     java(name, library, threads, keys), java(name, peer, threads, keys), goal)
    for row_id, figure, unit, name, library, peer, peer_name, threads, keys, goal in [
        ("sliding_log_64_rate", "sliding_log 64 threads distinct keys, decisions/s", RATE, "per_second",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 64, "distinct", (">=", 1.5)),
        ("sliding_log_64_hot_rate", "sliding_log 64 threads one hot key, decisions/s", RATE, "per_second",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 64, "hot", (">=", 1.5)),
        ("sliding_log_64_p99", "sliding_log 64 threads distinct keys, p99", US, "p99_us",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 64, "distinct", None),
        ("sliding_log_redis_cpu", "sliding_log 64 threads distinct keys, Redis CPU/decision (admitted)", US,
         "redis_us_per_decision", "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 64, "distinct", ("<=", 1)),
        ("sliding_log_client_cpu", "sliding_log 64 threads distinct keys, client (JVM) CPU/decision", US,
         "client_us_per_decision", "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 64, "distinct", None),
        ("sliding_log_1_p50", "sliding_log 1 thread, p50", US, "p50_us",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 1, "distinct", ("<=", 1)),
        ("sliding_log_1_p95", "sliding_log 1 thread, p95", US, "p95_us",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 1, "distinct", None),
        ("sliding_log_1_p99", "sliding_log 1 thread, p99", US, "p99_us",
         "rl sliding_log", JAVA_LOG, "Lettuce sliding log", 1, "distinct", None),
        ("gcra_64_rate", "gcra 64 threads distinct keys, decisions/s", RATE, "per_second",
         "rl gcra", BUCKET4J, "Bucket4j", 64, "distinct", (">=", 3)),
        ("gcra_64_hot_rate", "gcra 64 threads one hot key, decisions/s", RATE, "per_second",
         "rl gcra", BUCKET4J, "Bucket4j", 64, "hot", (">=", 20)),
        ("gcra_64_p99", "gcra 64 threads distinct keys, p99", US, "p99_us",
         "rl gcra", BUCKET4J, "Bucket4j", 64, "distinct", None),
        ("gcra_64_hot_p99", "gcra 64 threads one hot key, p99", US, "p99_us",
         "rl gcra", BUCKET4J, "Bucket4j", 64, "hot", None),
        ("gcra_redis_cpu", "gcra 64 threads distinct keys, Redis CPU/decision", US, "redis_us_per_decision",
         "rl gcra", BUCKET4J, "Bucket4j", 64, "distinct", None),
        ("gcra_client_cpu", "gcra 64 threads distinct keys, client (JVM) CPU/decision", US,
         "client_us_per_decision", "rl gcra", BUCKET4J, "Bucket4j", 64, "distinct", None),
        ("gcra_1_p50", "gcra 1 thread, p50", US, "p50_us", "rl gcra", BUCKET4J, "Bucket4j", 1, "distinct", ("<=", 1)),
        ("gcra_1_p99", "gcra 1 thread, p99", US, "p99_us", "rl gcra", BUCKET4J, "Bucket4j", 1, "distinct", None),
        ("gcra_1_rate", "gcra 1 thread, decisions/s", RATE, "per_second",
         "rl gcra", BUCKET4J, "Bucket4j", 1, "distinct", None),
        # No thread blocked per call: one thread keeps 64 calls in flight.
        ("sliding_log_async_rate", "sliding_log one thread, 64 async calls in flight, decisions/s", RATE,
         "per_second", "rl sliding_log async", JAVA_LOG + " async", "Lettuce sliding log (async API)", 1,
         "distinct", None),
        ("sliding_log_async_redis_cpu", "sliding_log one thread, 64 async calls in flight, Redis CPU/decision",
         US, "redis_us_per_decision", "rl sliding_log async", JAVA_LOG + " async",
         "Lettuce sliding log (async API)", 1, "distinct", None),
        ("sliding_log_async_client_cpu",
         "sliding_log one thread, 64 async calls in flight, client (JVM) CPU/decision", US,
         "client_us_per_decision", "rl sliding_log async", JAVA_LOG + " async",
         "Lettuce sliding log (async API)", 1, "distinct", None),
    ]
]
ROWS += [
    ("java_sliding_log_async_vs_blocking",
     "Java sliding_log decisions/s, one thread with 64 async calls in flight; peer: rl's 64 blocking threads",
     RATE, "java", java("per_second", "rl sliding_log async", 1, "distinct"),
     java("per_second", "rl sliding_log", 64, "distinct"), None),
]


def python(name, phase, contender):
    return field(name, bench="python", phase=phase, contender=contender)


# The Python bench (bench/python/bench.py): rl beside limits, the seed's
# redis-py sorted-set pipeline and redis-py's own PING.
MOVING, COUNTER, SEED = "limits moving window", "limits sliding window counter", "seed ZSET pipeline"
ROWS += [
    (f"python_sequential_{q}_{row_id}", f"Python sequential, {q}, {rl_name}; peer: {peer}", US, "python",
     python(f"{q}_us", "sequential", rl_name), python(f"{q}_us", "sequential", peer), None)
    for row_id, rl_name, peer in [
        ("sliding_log_vs_moving", "rl sliding_log", MOVING),
        ("sliding_window_vs_counter", "rl sliding_window", COUNTER),
        ("sliding_log_vs_seed", "rl sliding_log", SEED),
        ("gcra_vs_moving", "rl gcra", MOVING),
    ]
    for q in ("p50", "p99")
]
ROWS += [
    (f"python_sequential_p50_{algorithm}_vs_ping", f"Python sequential, p50, rl {algorithm}; peer: redis-py's own PING",
     US, "python", python("p50_us", "sequential", f"rl {algorithm}"), python("p50_us", "sequential", "redis-py PING"),
     ("<=", 1))
    for algorithm in ("gcra", "sliding_log", "sliding_window")
]
ROWS += [
    ("python_sequential_p50_gcra_vs_c", "Python sequential, p50, rl gcra; peer: the same sync call from C",
     US, ("python", "c"), python("p50_us", "sequential", "rl gcra"),
     field("rl_p50_us", bench="c_latency", algorithm="gcra"), None),
]
ROWS += [
    (f"python_tasks_{row_id}", f"Python 200 asyncio tasks, decisions/s, {rl_name}; peer: {peer}", RATE, "python",
     python("per_second", "tasks", rl_name), python("per_second", "tasks", peer), goal)
    for row_id, rl_name, peer, goal in [
        ("sliding_log_vs_moving", "rl sliding_log", MOVING, (">=", 3)),
        ("sliding_window_vs_counter", "rl sliding_window", COUNTER, (">=", 3)),
        ("gcra_vs_moving", "rl gcra", MOVING, (">=", 3)),
        ("sliding_log_vs_seed", "rl sliding_log", SEED, None),
    ]
]
ROWS += [
    (f"python_memory_{algorithm}", f"Python memory://, decisions/s, rl {algorithm}; peer: limits moving window",
     RATE, "python", python("per_second", "memory", f"rl {algorithm}"),
     python("per_second", "memory", "limits moving window (memory)"), (">=", 3))
    for algorithm in ("sliding_log", "gcra")
]
ROWS += [
    (f"python_memory_ns_{row_id}", f"Python memory:// gcra acquire, {what}; peer: the C ABI call", NS,
     ("python", "c_memory"), python("ns_per_call", "memory", contender),
     field("ns_per_call", bench="c_memory", algorithm="gcra"), None)
    for row_id, what, contender in [("package", "the package", "rl gcra"),
                                    ("swig", "the SWIG module alone", "rl gcra, SWIG module alone")]
]


# rl's Redis module (rl_redis_bench module, on the server with the module;
# bench/README.md, "rl's Redis module"): Redis CPU per decision of each
# algorithm against the cheapest peer script for it and against redis-cell,
# decisions per Redis core, and the benches' rl-on-the-module contenders.
def module_cpu(algorithm, in_flight, mode="module"):
    return field("redis_us_per_decision", bench="module_cpu", algorithm=algorithm, script_mode=mode,
                 in_flight=in_flight)


def python_cpu(phase, contender):
    return python("redis_us_per_decision", phase, contender)


def java_cpu(library, threads):
    return field("redis_command_us_per_decision", bench="java", library=library, threads=threads, keys="distinct")


# algorithm -> (in flight -> (the peers' names, their measurements, reader))
MODULE_PEERS = {
    "gcra": ("redis_rate (Go)", "go", {
        1: field("redis_us_per_decision", bench="go", library="redis_rate", goroutines=1),
        200: field("redis_us_per_decision", bench="go", library="redis_rate", goroutines=200)}),
    "token_bucket": ("the seed token bucket (Node)", ("node_sequential", "node_inflight"), {
        1: field("redis_us_per_decision", bench="node", phase="sequential", contender="seed token bucket"),
        200: field("redis_us_per_decision", bench="node", phase="inflight", contender="seed token bucket")}),
    "fixed_window": ("rate-limiter-flexible (Node)", ("node_sequential", "node_inflight"), {
        1: field("redis_us_per_decision", bench="node", phase="sequential", contender="rate-limiter-flexible"),
        200: field("redis_us_per_decision", bench="node", phase="inflight", contender="rate-limiter-flexible")}),
    "sliding_window": ("limits sliding window counter (Python)", "python", {
        1: python_cpu("sequential", COUNTER), 200: python_cpu("tasks", COUNTER)}),
    "sliding_log": ("the cheaper of the seed ZSET pipeline (Python) and the Lettuce log (Java)",
                    ("python", "java"), {
        1: least(python_cpu("sequential", SEED), java_cpu(JAVA_LOG, 1)),
        200: least(python_cpu("tasks", SEED), java_cpu(JAVA_LOG, 64))}),
}
ALGORITHMS = ("gcra", "token_bucket", "fixed_window", "sliding_window", "sliding_log")
IN_FLIGHT = {1: "1 in flight", 200: "200 in flight (coalesced)"}
ROWS += [
    (f"module_cpu_{algorithm}_{n}", f"Module Redis CPU/decision, {algorithm}, {IN_FLIGHT[n]}; peer: {peer_name}", US,
     ("module",) + (peer_source if isinstance(peer_source, tuple) else (peer_source,)),
     module_cpu(algorithm, n), readers[n], ("<=", 0.33))
    for algorithm in ALGORITHMS
    for peer_name, peer_source, readers in [MODULE_PEERS[algorithm]]
    for n in (1, 200)
]
ROWS += [
    (f"module_cell_{algorithm}_{n}", f"Module Redis CPU/decision, {algorithm}, {IN_FLIGHT[n]}; peer: redis-cell CL.THROTTLE",
     US, ("module", "cell"), module_cpu(algorithm, n),
     field("redis_us_per_decision", bench="cell", in_flight=n), ("<", 1))
    for algorithm in ALGORITHMS
    for n in (1, 200)
]
ROWS += [
    (f"module_lua_{algorithm}_{n}", f"Module Redis CPU/decision, {algorithm}, {IN_FLIGHT[n]}; peer: rl's Lua library, same server",
     US, "module", module_cpu(algorithm, n), module_cpu(algorithm, n, "functions"), None)
    for algorithm in ALGORITHMS
    for n in (1, 200)
]
ROWS += [
    ("module_per_core_batch", "Module decisions per Redis core (1 / Redis CPU per decision), gcra, redis-benchmark "
     "pipelining RL.MANY of 64 (the store's batch of one limiter); peer: the Lua library's batch FCALL of 64, same way",
     RATE, "module",
     field("per_core", bench="module_batch", via="redis-benchmark", script_mode="module"),
     field("per_core", bench="module_batch", via="redis-benchmark", script_mode="functions"),
     (">=", 1_000_000, "absolute")),
    ("module_rate_batch", "Module decisions/s, gcra, redis-benchmark pipelining RL.MANY of 64 (4 connections x 8); "
     "peer: the Lua library's batch FCALL of 64, same way", RATE, "module",
     field("per_second", bench="module_batch", via="redis-benchmark", script_mode="module"),
     field("per_second", bench="module_batch", via="redis-benchmark", script_mode="functions"), None),
    ("module_per_core_store", "Module decisions per Redis core (1 / Redis CPU per decision), gcra, rl's store, "
     "1,000 in flight (coalesced into RL.MANY); peer: the same on the Lua library", RATE, "module",
     field("per_core", bench="module_batch_store", script_mode="module"),
     field("per_core", bench="module_batch_store", script_mode="functions"), (">=", 1_000_000, "absolute")),
    ("module_rate_store", "Module decisions/s, gcra, rl's C store, 1,000 in flight (client on the same 2 cores); "
     "peer: the same on the Lua library", RATE, "module",
     field("per_second", bench="module_batch_store", script_mode="module"),
     field("per_second", bench="module_batch_store", script_mode="functions"), None),
]
# End to end: rl on the module's server (script_mode=module) beside the same
# peers as rl on Lua, with the Lua rows' goals ("module_contenders": the
# benches add rl on the module only for these rows).
ROWS += [
    (f"module_node_{algorithm}_{what}", f"Node 200 in flight, {label}, rl {algorithm} on the module; peer: rate-limiter-flexible",
     unit, ("node_inflight", "module_contenders"),
     field(name, bench="node", phase="inflight", contender=f"rl {algorithm} module"),
     field(name, bench="node", phase="inflight", contender="rate-limiter-flexible"), goal)
    for algorithm in ("gcra", "fixed_window")
    for what, label, unit, name, goal in [("rate", "decisions/s", RATE, "per_second", (">=", 1.5)),
                                          ("p99", "p99", US, "p99_us", ("<", 1))]
]
ROWS += [
    ("module_go_64_rate", "Go 64 goroutines, decisions/s, gcra, rl on the module; peer: redis_rate",
     RATE, ("go", "module_contenders"), field("per_second", bench="go", library="rl module", goroutines=64),
     field("per_second", bench="go", library="redis_rate", goroutines=64), (">=", 1.5)),
    ("module_go_1_p50", "Go 1 goroutine, p50, gcra, rl on the module; peer: redis_rate",
     US, ("go", "module_contenders"), field("p50_us", bench="go", library="rl module", goroutines=1),
     field("p50_us", bench="go", library="redis_rate", goroutines=1), ("<=", 1.2)),
]
ROWS += [
    (f"module_java_{row_id}", f"Java {figure}, rl on the module; peer: {peer_name}", RATE, ("java", "module_contenders"),
     java("per_second", library, 64, keys), java("per_second", peer, 64, keys), goal)
    for row_id, figure, library, peer, peer_name, keys, goal in [
        ("gcra_64_rate", "gcra 64 threads distinct keys, decisions/s", "rl gcra module", BUCKET4J, "Bucket4j",
         "distinct", (">=", 3)),
        ("gcra_64_hot_rate", "gcra 64 threads one hot key, decisions/s", "rl gcra module", BUCKET4J, "Bucket4j",
         "hot", (">=", 20)),
        ("sliding_log_64_rate", "sliding_log 64 threads distinct keys, decisions/s", "rl sliding_log module",
         JAVA_LOG, "Lettuce sliding log", "distinct", (">=", 1.5)),
        ("sliding_log_64_hot_rate", "sliding_log 64 threads one hot key, decisions/s", "rl sliding_log module",
         JAVA_LOG, "Lettuce sliding log", "hot", (">=", 1.5)),
    ]
]


# The frameworks (bench/frameworks/run): each app's /limited route beside its
# /bare one, same run, one loopback client; then what rl adds (limited minus
# bare) beside the store's own round trip, timed inside the same app (goal:
# the integration adds no more than the round trip it must make).
def framework(name, fw):
    return field(name, bench="frameworks", framework=fw)


def over_bare(route, q, fw):
    def read(results):
        r = one(results, bench="frameworks", framework=fw)
        return None if r is None or f"{route}_{q}_us" not in r else r[f"{route}_{q}_us"] - r[f"bare_{q}_us"]
    return read


# (row id, bench/frameworks/run's name, label)
FRAMEWORKS = [("spring", "spring", "Spring Boot servlet (starter's filter)"),
              ("webflux", "webflux", "Spring WebFlux (starter's WebFilter)"),
              ("fastapi", "fastapi", "FastAPI (RateLimit.wrap on the endpoint)"),
              ("fastapi_depends", "fastapi-depends", "FastAPI (Depends(RateLimit))"),
              ("fastify", "fastify", "Fastify (rl's plugin)"), ("go", "go", "Go net/http (rlhttp)"),
              ("grpc_java", "grpc-java", "grpc-java (RateLimitServerInterceptor)"),
              ("grpc_go", "grpc-go", "grpc-go (rlgrpc unary interceptor)"),
              ("grpc_python", "grpc-python", "grpcio asyncio (rl.grpc.AsyncRateLimitInterceptor)")]
ROWS += [
    (f"fw_{row}_{q}", f"{label}, {q} per request with rl; peer: the bare route, same app", US, "frameworks",
     framework(f"limited_{q}_us", fw), framework(f"bare_{q}_us", fw), None)
    for row, fw, label in FRAMEWORKS
    for q in ("p50", "p99")
]
ROWS += [
    (f"fw_{row}_added_{q}", f"{label}, {q} rl adds per request; peer: the store's own round trip, {q}", US,
     "frameworks", over_bare("limited", q, fw), framework(f"store_{q}_us", fw), ("<=", 1))
    for row, fw, label in FRAMEWORKS
    for q in ("p50", "p99")
]
# The same, against the round trip as a request sees it: a handler that
# makes the same acquire itself (the /store request over bare, as the client
# timed both), which also pays what waking up after the call costs there.
ROWS += [
    (f"fw_{row}_added_vs_handler_{q}",
     f"{label}, {q} rl adds per request; peer: a handler's own acquire (the /store request over bare), {q}", US,
     "frameworks", over_bare("limited", q, fw), over_bare("store_request", q, fw), ("<=", 1))
    for row, fw, label in FRAMEWORKS
    for q in ("p50", "p99")
]

# rl-ratelimit against envoyproxy/ratelimit (bench/ratelimit): one
# redis-server, the same fixed-window config, one gRPC load generator; the
# peer at its defaults, with REDIS_PIPELINE_WINDOW=150us, and with its local
# cache for the overload rows (nearly every request over the limit).
def edge(name, server, phase="within", streams=64):
    return field(name, bench="ratelimit", server=server, phase=phase, streams=streams)


EDGE_PEERS = [("", "envoy", "envoyproxy/ratelimit defaults"),
              ("_pipeline", "envoy_pipeline", "envoyproxy/ratelimit REDIS_PIPELINE_WINDOW=150us")]
ROWS += [
    row
    for suffix, peer, peer_name in EDGE_PEERS
    for row in [
        (f"ratelimit_64_per_core{suffix}", f"Envoy RLS 64 streams, decisions/s per server core; peer: {peer_name}", RATE,
         "ratelimit", edge("per_server_core", "rl"), edge("per_server_core", peer), (">=", 2)),
        (f"ratelimit_64_rate{suffix}", f"Envoy RLS 64 streams, decisions/s; peer: {peer_name}", RATE,
         "ratelimit", edge("per_second", "rl"), edge("per_second", peer), None),
        (f"ratelimit_64_p99{suffix}", f"Envoy RLS 64 streams, p99; peer: {peer_name}", US,
         "ratelimit", edge("p99_us", "rl"), edge("p99_us", peer), ("<=", 1)),
        (f"ratelimit_1_p50{suffix}", f"Envoy RLS 1 stream, p50; peer: {peer_name}", US,
         "ratelimit", edge("p50_us", "rl", streams=1), edge("p50_us", peer, streams=1), None),
        (f"ratelimit_1_p99{suffix}", f"Envoy RLS 1 stream, p99; peer: {peer_name}", US,
         "ratelimit", edge("p99_us", "rl", streams=1), edge("p99_us", peer, streams=1), ("<=", 1)),
        (f"ratelimit_redis_cpu{suffix}", f"Envoy RLS 64 streams, Redis CPU/decision (commandstats), Lua path; peer: {peer_name}", US,
         "ratelimit", edge("redis_us_per_decision", "rl"), edge("redis_us_per_decision", peer), ("<=", 1)),
        (f"ratelimit_redis_cpu_module{suffix}", f"Envoy RLS 64 streams, Redis CPU/decision, rl's module; peer: {peer_name}", US,
         "ratelimit", edge("redis_us_per_decision", "rl_module"), edge("redis_us_per_decision", peer), ("<=", 0.5)),
        (f"ratelimit_redis_process_cpu{suffix}", f"Envoy RLS 64 streams, Redis process CPU/decision (INFO cpu), Lua path; peer: {peer_name}", US,
         "ratelimit", edge("redis_process_us_per_decision", "rl"), edge("redis_process_us_per_decision", peer), None),
        (f"ratelimit_redis_calls{suffix}", f"Envoy RLS 64 streams, Redis top-level commands/decision (load-independent but for batching), Lua path; peer: {peer_name}", "calls",
         "ratelimit", edge("redis_calls_per_decision", "rl"), edge("redis_calls_per_decision", peer), None),
        (f"ratelimit_redis_bytes{suffix}", f"Envoy RLS 64 streams, bytes to Redis/decision, Lua path; peer: {peer_name}", BYTES,
         "ratelimit", edge("redis_bytes_in_per_decision", "rl"), edge("redis_bytes_in_per_decision", peer), None),
        (f"ratelimit_server_cpu{suffix}", f"Envoy RLS 64 streams, server CPU/decision; peer: {peer_name}", US,
         "ratelimit", edge("server_us_per_decision", "rl"), edge("server_us_per_decision", peer), None),
        (f"ratelimit_overload_redis_cpu{suffix}", f"Envoy RLS 10x overload, Redis CPU/decision; peer: {peer_name}", US,
         "ratelimit", edge("redis_us_per_decision", "rl", "overload"), edge("redis_us_per_decision", peer, "overload"), ("<=", 0.2)),
        (f"ratelimit_overload_redis_cpu_rl_cache{suffix}", f"Envoy RLS 10x overload, Redis CPU/decision, rl with LOCAL_CACHE_SIZE_IN_BYTES; peer: {peer_name}", US,
         "ratelimit", edge("redis_us_per_decision", "rl_cache", "overload"), edge("redis_us_per_decision", peer, "overload"), ("<=", 0.2)),
    ]
] + [
    ("ratelimit_overload_redis_cpu_cache", "Envoy RLS 10x overload, Redis CPU/decision, both with LOCAL_CACHE_SIZE_IN_BYTES; peer: envoyproxy/ratelimit", US,
     "ratelimit", edge("redis_us_per_decision", "rl_cache", "overload"), edge("redis_us_per_decision", "envoy_cache", "overload"), ("<=", 0.2)),
    ("ratelimit_exactness", "Envoy RLS 4 server processes, one descriptor at 10x, admitted (limit 200); peer: envoyproxy/ratelimit", "",
     "ratelimit", field("admitted", bench="ratelimit_exactness", server="rl"),
     field("admitted", bench="ratelimit_exactness", server="envoy"), None),
    ("ratelimit_config_start", "Envoy RLS 10,000-descriptor config, start to serving (ms); peer: envoyproxy/ratelimit", "ms",
     "ratelimit", field("start_ms", bench="ratelimit_config", server="rl"), field("start_ms", bench="ratelimit_config", server="envoy"), None),
    ("ratelimit_config_reload", "Envoy RLS 10,000-descriptor config, file renamed in to new answers (ms); peer: envoyproxy/ratelimit", "ms",
     "ratelimit", field("reload_ms", bench="ratelimit_config", server="rl"), field("reload_ms", bench="ratelimit_config", server="envoy"), None),
    ("ratelimit_config_rss", "Envoy RLS 10,000-descriptor config, server RSS (kB); peer: envoyproxy/ratelimit", "kB",
     "ratelimit", field("rss_kb", bench="ratelimit_config", server="rl"), field("rss_kb", bench="ratelimit_config", server="envoy"), None),
]


def rust(name, **match):
    return field(name, bench="rust", **match)


# The Rust bench (bench/rust): rl beside trypema 2.2.1's Redis provider on
# the same redis-server (16 tasks on 10 keys, trypema's own bench shape, and
# 64 calls in flight on one key), exactness beside it across 4 processes,
# rl's memory:// beside governor 0.10.4's keyed limiter, and the binding's
# own cost per call.
RUST_PAIRS = [
    ("absolute", "rl sliding_window", "trypema absolute"),
    ("absolute_api", "rl::trypema absolute", "trypema absolute"),
    ("suppressed", "rl suppressed", "trypema suppressed"),
    ("suppressed_api", "rl::trypema suppressed", "trypema suppressed"),
]
RUST_PHASES = [("tasks", "16 tasks x 10 keys"), ("inflight", "64 calls in flight on one key")]
ROWS += [
    (f"rust_{phase}_{pair}_per_second", f"Rust {label}, decisions/s, {rl_name}; peer: {peer}", RATE, "rust",
     rust("per_second", phase=phase, contender=rl_name), rust("per_second", phase=phase, contender=peer), (">=", 2))
    for phase, label in RUST_PHASES
    for pair, rl_name, peer in RUST_PAIRS
]
ROWS += [
    (f"rust_{phase}_{pair}_{q}", f"Rust {label}, {q} latency, {rl_name}; peer: {peer}", US, "rust",
     rust(f"{q}_us", phase=phase, contender=rl_name), rust(f"{q}_us", phase=phase, contender=peer), None)
    for phase, label in RUST_PHASES
    for pair, rl_name, peer in RUST_PAIRS
    for q in ("p50", "p99")
]
ROWS += [
    (f"rust_{phase}_{pair}_redis_cpu", f"Rust {label}, Redis CPU/decision, {rl_name}; peer: {peer}", US, "rust",
     rust("redis_us_per_decision", phase=phase, contender=rl_name),
     rust("redis_us_per_decision", phase=phase, contender=peer), ("<=", 0.33))
    for phase, label in RUST_PHASES
    for pair, rl_name, peer in RUST_PAIRS
]
ROWS += [
    (f"rust_exactness_{row}", f"Rust 4 processes x 16 tasks on one key at 10x a limit of 100 per 2 s, most admitted in any 2 s window, {rl_name}; peer: trypema absolute",
     "", "rust_exactness", rust("max_in_window", phase="exactness", contender=rl_name),
     rust("max_in_window", phase="exactness", contender="trypema absolute"), ("<=", 100, "absolute"))
    for row, rl_name in [("sliding_log", "rl sliding_log"), ("trypema_api", "rl::trypema absolute")]
]
ROWS += [
    (f"rust_memory_{keys}_keys_{threads}_threads", f"Rust in process, {keys:,} key(s), {threads} thread(s), decisions/s, rl memory://; peer: governor keyed",
     RATE, "rust_memory", rust("per_second", phase="memory", contender="rl memory", keys=keys, threads=threads),
     rust("per_second", phase="memory", contender="governor keyed", keys=keys, threads=threads), (">=", 1))
    for keys in (1, 100_000)
    for threads in (1, 16)
]
ROWS += [
    ("rust_cost_blocking", "Rust memory:// acquire_blocking, ns/call; peer: the raw rl-sys call", NS, "rust_cost",
     rust("blocking_ns_per_call", phase="cost"), rust("sys_ns_per_call", phase="cost"), None),
    ("rust_cost_async", "Rust memory:// async acquire (block_on), ns/call; peer: the raw rl-sys call", NS, "rust_cost",
     rust("async_ns_per_call", phase="cost"), rust("sys_ns_per_call", phase="cost"), None),
    ("rust_cost_allocs", "Rust memory:// acquire_blocking, allocations/call; peer: async acquire", "", "rust_cost",
     rust("blocking_allocs_per_call", phase="cost"), rust("async_allocs_per_call", phase="cost"), None),
]


def sources_of(row):
    source = row[3]
    return source if isinstance(source, tuple) else (source,)


def selected(prefixes):
    wanted = [p for p in prefixes.split(",") if p]
    rows = [r for r in ROWS if not wanted or any(r[0].startswith(p) for p in wanted)]
    if not rows:
        sys.exit(f"table.py: no row starts with {prefixes!r}; rows: {', '.join(r[0] for r in ROWS)}")
    return rows


def show(value, unit):
    if value is None:
        return "no data"
    if unit == RATE:
        return f"{value:,.0f}"
    if 0 < value < 0.01:
        return f"{value:.2g}"  # a lease row's store calls per decision, say
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def met(ratio, goal, value=None):
    """The goal on the ratio, or with a third element ("absolute") on rl's value itself."""
    op, bound = goal[:2]
    x = value if absolute(goal) else ratio
    return {"<=": x <= bound, ">=": x >= bound, "<": x < bound}[op]


def absolute(goal):
    return goal is not None and len(goal) > 2


def not_measured(row, results):
    """Why a row has no figures in this run ("skipped (...)", "not built yet"), or None."""
    for source in sources_of(row):
        skipped = one(results, bench="skipped", source=source)
        if skipped:
            return f"skipped ({skipped['why']})"
    if row[0] == "node_try_acquire" and one(results, contender="rl tryAcquire", missing=True):
        return "not built yet"
    return None


def print_table(rows, runs):
    """One line per row; with several runs, the medians and the ratio's min-max."""
    several = len(runs) > 1
    spread_head = f" spread ({len(runs)} runs) |" if several else ""
    print(f"| figure | rl | peer | ratio |{spread_head} goal | met? |")
    print(f"| --- | ---: | ---: | ---: |{' --- |' if several else ''} ---: | --- |")
    for row in rows:
        row_id, figure, unit, _, rl, peer, goal = row
        goal_text = ""
        if goal:
            goal_text = f"{goal[0]} {show(goal[1], unit)} {unit}" if absolute(goal) else f"{goal[0]} {goal[1]}x"
        why = not_measured(row, runs[0])
        pairs = [(rl(r), peer(r)) for r in runs]
        # A peer of 0 or less (a difference of two p99s can be) has no ratio.
        ratios = [a / b for a, b in pairs if a is not None and b is not None and b > 0]
        if why:
            cells = [why, "", "", why if why == "not built yet" else ""]
            b_values = [b for _, b in pairs if b is not None]
            cells[1] = show(statistics.median(b_values), unit) if b_values else ""
        elif not ratios:
            a_values = [a for a, _ in pairs if a is not None]
            b_values = [b for _, b in pairs if b is not None]
            cells = [show(statistics.median(a_values) if a_values else None, unit),
                     show(statistics.median(b_values) if b_values else None, unit), "", "no data"]
        else:
            measured = [(a, b) for a, b in pairs if a is not None and b is not None and b > 0]
            ratio = statistics.median(ratios)
            rl_median = statistics.median(a for a, _ in measured)
            verdict = ""
            if goal is not None:
                verdict = "yes" if met(ratio, goal, rl_median) else "**no**"
                hits = sum(met(x, goal, a) for x, (a, _) in zip(ratios, measured))
                if several and 0 < hits < len(ratios):
                    verdict += f" ({hits} of {len(ratios)} runs)"
            if len(ratios) < len(runs):
                verdict += f" ({len(runs) - len(ratios)} runs no data)"
            cells = [show(statistics.median(a for a, _ in measured), unit),
                     show(statistics.median(b for _, b in measured), unit), f"{ratio:.2f}x", verdict]
        spread = ""
        if several:
            spread = f" {min(ratios):.2f}-{max(ratios):.2f}x |" if ratios and not why else " |"
        print(f"| {figure} ({unit}) | {cells[0]} | {cells[1]} | {cells[2]} |{spread} {goal_text} | {cells[3]} |")


def print_header(header, runs):
    """The header, its title marked noisy (load.py's rule) when any run started above the limit,
    then each run's load average at start and end and its durations."""
    title, *rest = header.rstrip().split("\n")
    starts = [one(r, bench="load", at="start") for r in runs]
    noisy = [(i, s) for i, s in enumerate(starts, 1) if s and load.noisy(s["loadavg"][0], s["cpus"])]
    if noisy:
        title += " (noisy)"
    print(title)
    if noisy:
        i, s = noisy[0]
        print(load.noisy_note(s["loadavg"][0], s["cpus"], "at start" if len(runs) == 1 else f"at the start of run {i}")
              + (f" ({'run' if len(noisy) == 1 else 'runs'} {', '.join(str(j) for j, _ in noisy)} of {len(runs)}"
                 " started noisy)" if len(runs) > 1 else ""))
    for line in rest:
        print(line)
    for i, results in enumerate(runs, 1):
        print(f"run {i}: {load_line(results)}" if len(runs) > 1 else load_line(results))


def load_line(results):
    """A run's load average at start (noisy or not) and at end, and its durations."""
    start, end = one(results, bench="load", at="start"), one(results, bench="load", at="end")
    took = one(results, bench="run")
    text = "load average at start " + (load.show(start["loadavg"]) if start else "?")
    if start and load.noisy(start["loadavg"][0], start["cpus"]):
        text += " (noisy)"
    if start and start.get("builds"):
        text += f", while building: {load.show_builds(start['builds'])}"
    if end:
        text += ", at end " + load.show(end["loadavg"])
    if took:
        text += f", measured in {took['seconds']} s ({took['timings']})"
    return text


def read_results(path):
    results = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                results.append(json.loads(line))
    return results


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "sources":
        for source in dict.fromkeys(s for r in selected(sys.argv[2]) for s in sources_of(r)):
            print(source)
    elif command == "rows":
        for r in ROWS:
            print(f"{r[0]:48} {r[1]}")
    elif command == "load" and len(sys.argv) == 3:
        print(load_line(read_results(sys.argv[2])))
    elif command == "print" and len(sys.argv) >= 5:
        rows = selected(sys.argv[2])
        with open(sys.argv[3]) as f:
            header = f.read()
        runs = [read_results(path) for path in sys.argv[4:]]
        print_header(header, runs)
        print()
        print_table(rows, runs)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
