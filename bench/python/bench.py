#!/usr/bin/env python3
"""rl's Python binding beside the Python rate limiters it replaces, on one
redis-server (bench/run starts it and gives --redis); prints one JSON line
per contender and measure, which bench/table.py reads (rows and goals):

- sequential: one caller, p50/p99 per decision (sync calls), and Redis
  CPU per decision (INFO commandstats);
- 200 tasks: 200 asyncio tasks, each making its share of the decisions
  in turn, decisions/s and Redis CPU per decision;
- memory: in-process decisions/s, one caller;
- overhead: ns per memory:// acquire through the package and through the
  SWIG module alone (bench/run measures the C ABI's own call beside it,
  rl_bench_memory, and the same synchronous Redis gcra call from C,
  rl_redis_bench).

Peers: limits 5.x (moving window and sliding window counter, on redis-py
for sync and its default async Redis client), the seed's redis-py ZSET
pipeline (bench/python/seed_zset.py) and redis-py's own PING round trip.
Every contender runs ROUNDS alternating rounds; the lines give medians.
Every request is admitted (the limits are far above the load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import limits
import limits.aio.strategies
import limits.storage
import limits.strategies
import redis
import redis.asyncio

import rl

sys.path.insert(0, str(Path(__file__).parent))
import seed_zset  # noqa: E402

KEYS = [f"user:{i}" for i in range(1000)]
BIG = "1000000/1m"  # rl
BIG_LIMITS = "1000000/minute"  # the same for limits


def quantile(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


# ---------------------------------------------------------------- contenders
def rl_url(url: str, prefix: str, options: str) -> str:
    """rl's store URL: its own key prefix, and bench/run's --store-options."""
    return f"{url}?prefix={prefix}" + (f"&{options}" if options else "")


def sync_contenders(url: str, prefix: str, options: str):
    """name -> (setup() -> one_call(i), teardown)"""
    r = redis.Redis.from_url(url)
    item = limits.parse(BIG_LIMITS)
    storage = limits.storage.storage_from_string(url, key_prefix=f"{prefix}lim")
    moving = limits.strategies.MovingWindowRateLimiter(storage)
    counter = limits.strategies.SlidingWindowCounterRateLimiter(storage)
    store = rl.open(rl_url(url, f"{prefix}rl", options))
    rl_log = store.limiter(algorithm="sliding_log", limit=BIG, name="seqlog")
    rl_window = store.limiter(algorithm="sliding_window", limit=BIG, name="seqwin")
    rl_gcra = store.limiter(algorithm="gcra", limit=BIG, name="seqgcra")
    calls = {
        "rl sliding_log": lambda k: rl_log.acquire(k).allowed,
        "rl sliding_window": lambda k: rl_window.acquire(k).allowed,
        "rl gcra": lambda k: rl_gcra.acquire(k).allowed,
        "limits moving window": lambda k: moving.hit(item, k),
        "limits sliding window counter": lambda k: counter.hit(item, k),
        "seed ZSET pipeline": lambda k: seed_zset.is_allowed(r, k, 1_000_000, 60),
        "redis-py PING": lambda k: r.ping(),
    }
    return calls, store


RUNS_OTHERS = {"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "exec"}


def entry_command(command: str) -> bool:
    """Sent by a client, not run by a script or a transaction."""
    return (
        command in RUNS_OTHERS
        or command == "multi"
        or command.startswith(("script|", "function|"))
        or "." in command
    )


def server_usec(admin) -> int:
    """Microseconds the server spent in commands since CONFIG RESETSTAT, but
    for the admin connection's own INFO and CONFIG; when scripts or
    transactions ran, only the commands clients sent (their time includes
    the commands they ran, which commandstats lists too): every bench's
    measure of Redis CPU per decision (bench/README.md)."""
    usec = {
        name.removeprefix("cmdstat_"): stats["usec"]
        for name, stats in admin.info("commandstats").items()
        if name not in ("cmdstat_info", "cmdstat_config")
    }
    nested = any(command in RUNS_OTHERS for command in usec)
    return sum(u for command, u in usec.items() if not nested or entry_command(command))


def sequential(calls: dict, n: int, rounds: int, admin) -> dict:
    samples = {name: [] for name in calls}
    usec = {name: [] for name in calls}
    for name, call in calls.items():  # warm-up: connections, scripts loaded
        for k in KEYS[:50]:
            assert call(k)
    for _ in range(rounds):
        for name, call in calls.items():
            times = []
            admin.config_resetstat()
            for i in range(n):
                k = KEYS[i % len(KEYS)]
                t = time.perf_counter_ns()
                ok = call(k)
                times.append(time.perf_counter_ns() - t)
                assert ok, name
            usec[name].append(server_usec(admin) / n)
            samples[name].append((quantile(times, 0.5) / 1000, quantile(times, 0.99) / 1000))
    return {
        name: {
            "p50_us": statistics.median(p for p, _ in s),
            "p99_us": statistics.median(p for _, p in s),
            "redis_us_per_decision": statistics.median(usec[name]),
        }
        for name, s in samples.items()
    }


async def tasks_throughput(url: str, prefix: str, options: str, total: int, tasks: int, rounds: int, admin) -> dict:
    item = limits.parse(BIG_LIMITS)
    aio_storage = limits.storage.storage_from_string(f"async+{url}", key_prefix=f"{prefix}alim")
    moving = limits.aio.strategies.MovingWindowRateLimiter(aio_storage)
    counter = limits.aio.strategies.SlidingWindowCounterRateLimiter(aio_storage)
    ar = redis.asyncio.Redis.from_url(url, max_connections=tasks)
    store = await rl.aopen(rl_url(url, f"{prefix}arl", options))
    rl_log = store.limiter(algorithm="sliding_log", limit=BIG, name="tlog")
    rl_window = store.limiter(algorithm="sliding_window", limit=BIG, name="twin")
    rl_gcra = store.limiter(algorithm="gcra", limit=BIG, name="tgcra")

    async def rl_call(lim, k):
        return (await lim.aacquire(k)).allowed

    calls = {
        "rl sliding_log": lambda k: rl_call(rl_log, k),
        "rl sliding_window": lambda k: rl_call(rl_window, k),
        "rl gcra": lambda k: rl_call(rl_gcra, k),
        "limits moving window": lambda k: moving.hit(item, k),
        "limits sliding window counter": lambda k: counter.hit(item, k),
        "seed ZSET pipeline": lambda k: seed_zset.ais_allowed(ar, k, 1_000_000, 60),
    }
    per_task = total // tasks

    async def worker(call, t):
        for i in range(per_task):
            assert await call(KEYS[(t * per_task + i) % len(KEYS)])

    rates = {name: [] for name in calls}
    usec = {name: [] for name in calls}
    for call in calls.values():  # warm-up
        await asyncio.gather(*(worker_once(call, k) for k in KEYS[:tasks]))
    for _ in range(rounds):
        for name, call in calls.items():
            admin.config_resetstat()  # a sync call between rounds: nothing else is in flight
            t = time.perf_counter()
            await asyncio.gather(*(worker(call, i) for i in range(tasks)))
            rates[name].append(per_task * tasks / (time.perf_counter() - t))
            usec[name].append(server_usec(admin) / (per_task * tasks))
    store.close()
    await ar.aclose()
    return {
        name: {"per_second": statistics.median(r), "redis_us_per_decision": statistics.median(usec[name])}
        for name, r in rates.items()
    }


async def worker_once(call, k):
    assert await call(k)


def memory_throughput(n: int, rounds: int) -> dict:
    item = limits.parse(BIG_LIMITS)
    moving = limits.strategies.MovingWindowRateLimiter(limits.storage.MemoryStorage())
    store = rl.open("memory://")
    rl_log = store.limiter(algorithm="sliding_log", limit=BIG, name="mlog")
    rl_gcra = store.limiter(algorithm="gcra", limit=BIG, name="mgcra")
    native_acquire, handle = rl.native.rl_limiter_acquire, rl_gcra._handle
    calls = {
        "rl sliding_log": lambda k: rl_log.acquire(k).allowed,
        "rl gcra": lambda k: rl_gcra.acquire(k).allowed,
        "rl gcra, SWIG module alone": lambda k: native_acquire(handle, (k, 1, 0)).allowed,
        "limits moving window (memory)": lambda k: moving.hit(item, k),
    }
    rates = {name: [] for name in calls}
    keys = KEYS * (n // len(KEYS))
    for _ in range(rounds):
        for name, call in calls.items():
            t = time.perf_counter_ns()
            for k in keys:
                call(k)
            rates[name].append(len(keys) / ((time.perf_counter_ns() - t) / 1e9))
    store.close()
    return {
        name: {"per_second": statistics.median(r), "ns_per_call": 1e9 / statistics.median(r)}
        for name, r in rates.items()
    }


# ---------------------------------------------------------------- JSON lines
def json_lines(phase: str, figures: dict) -> None:
    """One line per contender, read by bench/table.py (the rows and goals)."""
    for contender, values in figures.items():
        print(json.dumps({"bench": "python", "phase": phase, "contender": contender, **values}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--sequential", type=int, default=3000)
    parser.add_argument("--total", type=int, default=20000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--memory", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    options = os.environ.get("RL_BENCH_STORE_OPTIONS", "")
    prefix = f"bench{os.getpid()}"
    print(
        f"Python {platform.python_version()}, rl {rl.LIBRARY_VERSION}, limits {limits.__version__}, "
        f"redis-py {redis.__version__}, {args.rounds} rounds (medians)",
        file=sys.stderr,
    )
    admin = redis.Redis.from_url(args.redis)
    calls, store = sync_contenders(args.redis, prefix, options)
    json_lines("sequential", sequential(calls, args.sequential, args.rounds, admin))
    store.close()
    json_lines(
        "tasks",
        asyncio.run(tasks_throughput(args.redis, prefix, options, args.total, args.tasks, args.rounds, admin)),
    )
    json_lines("memory", memory_throughput(args.memory, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
