#!/usr/bin/env python3
"""The rows of bench/run's table: which measurement each needs, how rl and
its peer are read from the benches' JSON lines, and the goal.

  table.py sources ROW_PREFIXES   the measurements the rows need, one a line
  table.py rows                   every row id and figure
  table.py print ROW_PREFIXES RESULTS.jsonl HEADER.txt
                                  the table (Markdown), after the header
ROW_PREFIXES is a comma-separated list ("" for every row); a row is kept when
its id starts with one of them.
"""
import json
import sys


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


US, RATE, BYTES = "us", "/s", "B"

# id, figure, unit, measurement, rl, peer, goal: (comparison, ratio) or None.
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
     field("peer_p50_us", bench="c_latency", algorithm="gcra"), ("<=", 1.2)),
    ("c_replay_cpu", "C sync caller, Redis CPU/decision, gcra; peer: the replay (a check: about 1x)",
     US, "c", field("rl_redis_us_per_decision", bench="c_latency", algorithm="gcra"),
     field("peer_redis_us_per_call", bench="c_latency", algorithm="gcra"), None),
    ("deny_cache_store_calls", "deny cache: store calls per decision, one key at 20x its limit, 64 paced callers; peer: cache off",
     "calls", "deny_cache", field("store_calls_per_decision", bench="deny_cache", round=1, cache="on"),
     field("store_calls_per_decision", bench="deny_cache", round=1, cache="off"), ("<=", 0.1)),
    ("deny_cache_admitted", "deny cache: admitted in the same run; peer: cache off (a check: about 1x)",
     "decisions", "deny_cache", field("admitted", bench="deny_cache", round=1, cache="on"),
     field("admitted", bench="deny_cache", round=1, cache="off"), None),
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
    ("node_try_acquire", "Node tryAcquire on memory://, decisions/s; peer: RateLimiterMemory (best of 1 and 200 in flight)",
     RATE, "node_memory", field("per_second", bench="node", phase="memory", contender="rl tryAcquire"),
     best(field("per_second", bench="node", phase="memory", contender="RateLimiterMemory sequential"),
          field("per_second", bench="node", phase="memory", contender="RateLimiterMemory 200 in flight")),
     (">=", 2)),
]


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
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def met(ratio, goal):
    op, bound = goal
    return {"<=": ratio <= bound, ">=": ratio >= bound, "<": ratio < bound}[op]


def print_table(rows, results):
    print("| figure | rl | peer | ratio | goal | met? |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for row_id, figure, unit, source, rl, peer, goal in rows:
        a, b = rl(results), peer(results)
        skipped = one(results, bench="skipped", source=source)
        if skipped:
            a_text, ratio, verdict = f"skipped ({skipped['why']})", "", ""
        elif row_id == "node_try_acquire" and one(results, contender="rl tryAcquire", missing=True):
            a_text, ratio, verdict = "not built yet", "", "not built yet"
        else:
            a_text = show(a, unit)
            ratio = f"{a / b:.2f}x" if a is not None and b else ""
            if a is None or not b:
                verdict = "no data"
            elif goal is None:
                verdict = ""
            else:
                verdict = "yes" if met(a / b, goal) else "**no**"
        goal_text = f"{goal[0]} {goal[1]}x" if goal else ""
        print(f"| {figure} ({unit}) | {a_text} | {show(b, unit)} | {ratio} | {goal_text} | {verdict} |")


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "sources":
        for source in dict.fromkeys(r[3] for r in selected(sys.argv[2])):
            print(source)
    elif command == "rows":
        for r in ROWS:
            print(f"{r[0]:28} {r[1]}")
    elif command == "print":
        rows = selected(sys.argv[2])
        results = []
        with open(sys.argv[3]) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    results.append(json.loads(line))
        with open(sys.argv[4]) as f:
            print(f.read().rstrip())
        print()
        print_table(rows, results)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
