#!/usr/bin/env python3
"""rl's Python binding beside the Python rate limiters it replaces, on one
redis-server (bench/python/run starts it and gives --redis):

- sequential: one caller, p50/p99 per decision (sync calls);
- 200 tasks: 200 asyncio tasks, each making its share of the decisions
  in turn, decisions/s;
- memory: in-process decisions/s, one caller;
- overhead: ns per memory:// acquire through the package, through the SWIG
  module alone, and through the C ABI (rl_bench_memory, given by --c-ns);
  on Redis, the p50 of the same synchronous gcra call from C
  (rl_redis_bench, given by --c-redis-p50).

Peers: limits 5.x (moving window and sliding window counter, on redis-py
for sync and its default async Redis client), the seed's redis-py ZSET
pipeline (bench/python/seed_zset.py) and redis-py's own PING round trip.
Every contender runs ROUNDS alternating rounds; the table shows medians.
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
def sync_contenders(url: str, prefix: str):
    """name -> (setup() -> one_call(i), teardown)"""
    r = redis.Redis.from_url(url)
    item = limits.parse(BIG_LIMITS)
    storage = limits.storage.storage_from_string(url, key_prefix=f"{prefix}lim")
    moving = limits.strategies.MovingWindowRateLimiter(storage)
    counter = limits.strategies.SlidingWindowCounterRateLimiter(storage)
    store = rl.open(f"{url}?prefix={prefix}rl")
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


def sequential(calls: dict, n: int, rounds: int) -> dict:
    samples = {name: [] for name in calls}
    for name, call in calls.items():  # warm-up: connections, scripts loaded
        for k in KEYS[:50]:
            assert call(k)
    for _ in range(rounds):
        for name, call in calls.items():
            times = []
            for i in range(n):
                k = KEYS[i % len(KEYS)]
                t = time.perf_counter_ns()
                ok = call(k)
                times.append(time.perf_counter_ns() - t)
                assert ok, name
            samples[name].append((quantile(times, 0.5) / 1000, quantile(times, 0.99) / 1000))
    return {
        name: {"p50_us": statistics.median(p for p, _ in s), "p99_us": statistics.median(p for _, p in s)}
        for name, s in samples.items()
    }


async def tasks_throughput(url: str, prefix: str, total: int, tasks: int, rounds: int) -> dict:
    item = limits.parse(BIG_LIMITS)
    aio_storage = limits.storage.storage_from_string(f"async+{url}", key_prefix=f"{prefix}alim")
    moving = limits.aio.strategies.MovingWindowRateLimiter(aio_storage)
    counter = limits.aio.strategies.SlidingWindowCounterRateLimiter(aio_storage)
    ar = redis.asyncio.Redis.from_url(url, max_connections=tasks)
    store = await rl.aopen(f"{url}?prefix={prefix}arl")
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
    for call in calls.values():  # warm-up
        await asyncio.gather(*(worker_once(call, k) for k in KEYS[:tasks]))
    for _ in range(rounds):
        for name, call in calls.items():
            t = time.perf_counter()
            await asyncio.gather(*(worker(call, i) for i in range(tasks)))
            rates[name].append(per_task * tasks / (time.perf_counter() - t))
    store.close()
    await ar.aclose()
    return {name: {"decisions_per_s": statistics.median(r)} for name, r in rates.items()}


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
        name: {"decisions_per_s": statistics.median(r), "ns_per_call": 1e9 / statistics.median(r)}
        for name, r in rates.items()
    }


# --------------------------------------------------------------------- table
def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def table(seq: dict, aio: dict, mem: dict, c_ns: float | None, c_redis_p50: float | None) -> str:
    rows = ["| figure | rl | peer | rl / peer | goal | met? |", "| --- | ---: | ---: | ---: | --- | --- |"]

    def row(figure, a, b, fmt, goal="", met=""):
        rows.append(f"| {figure} | {fmt.format(a)} | {fmt.format(b)} | {ratio(a, b)} | {goal} | {met} |")

    ping = seq["redis-py PING"]["p50_us"]
    for rl_name, peer in [
        ("rl sliding_log", "limits moving window"),
        ("rl sliding_window", "limits sliding window counter"),
        ("rl sliding_log", "seed ZSET pipeline"),
        ("rl gcra", "limits moving window"),
    ]:
        for q in ("p50_us", "p99_us"):
            row(f"sequential {q[:3]} us: {rl_name} vs {peer}", seq[rl_name][q], seq[peer][q], "{:.1f}")
    for rl_name in ("rl gcra", "rl sliding_log", "rl sliding_window"):
        p50 = seq[rl_name]["p50_us"]
        row(
            f"sequential p50 us: {rl_name} vs redis-py's own PING round trip",
            p50,
            ping,
            "{:.1f}",
            "<= 1x",
            "yes" if p50 <= ping else "no",
        )
    if c_redis_p50:
        row(
            "sequential p50 us: rl gcra from Python vs the same sync call from C",
            seq["rl gcra"]["p50_us"],
            c_redis_p50,
            "{:.1f}",
        )
    for rl_name, peer in [
        ("rl sliding_log", "limits moving window"),
        ("rl sliding_window", "limits sliding window counter"),
        ("rl gcra", "limits moving window"),
        ("rl sliding_log", "seed ZSET pipeline"),
    ]:
        a, b = aio[rl_name]["decisions_per_s"], aio[peer]["decisions_per_s"]
        goal = ">= 3x" if peer.startswith("limits") else ""
        row(
            f"200 asyncio tasks, decisions/s: {rl_name} vs {peer}",
            a,
            b,
            "{:,.0f}",
            goal,
            ("yes" if a >= 3 * b else "no") if goal else "",
        )
    for rl_name in ("rl sliding_log", "rl gcra"):
        a, b = mem[rl_name]["decisions_per_s"], mem["limits moving window (memory)"]["decisions_per_s"]
        row(
            f"memory://, decisions/s: {rl_name} vs limits moving window (memory)",
            a,
            b,
            "{:,.0f}",
            ">= 3x",
            "yes" if a >= 3 * b else "no",
        )
    pkg, swig = mem["rl gcra"]["ns_per_call"], mem["rl gcra, SWIG module alone"]["ns_per_call"]
    if c_ns:
        row("memory:// gcra acquire, ns/call: Python package vs C ABI call", pkg, c_ns, "{:,.0f}")
        row("memory:// gcra acquire, ns/call: SWIG module alone vs C ABI call", swig, c_ns, "{:,.0f}")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--sequential", type=int, default=3000)
    parser.add_argument("--total", type=int, default=20000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--memory", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--c-ns", type=float, default=None, help="ns per rl_limiter_acquire (rl_bench_memory)"
    )
    parser.add_argument("--c-redis-p50", type=float, default=None, help="us, rl_redis_bench latency gcra")
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args()
    prefix = f"bench{os.getpid()}"
    load_start = os.getloadavg()
    calls, store = sync_contenders(args.redis, prefix)
    seq = sequential(calls, args.sequential, args.rounds)
    store.close()
    aio = asyncio.run(tasks_throughput(args.redis, prefix, args.total, args.tasks, args.rounds))
    mem = memory_throughput(args.memory, args.rounds)
    load_end = os.getloadavg()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(
        f"machine: {os.cpu_count()} CPUs ({cpu}), load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end"
    )
    print(
        f"versions: Python {platform.python_version()}, rl {rl.LIBRARY_VERSION}, limits {limits.__version__}, "
        f"redis-py {redis.__version__}, {args.rounds} rounds (medians)"
    )
    print()
    print(table(seq, aio, mem, args.c_ns, args.c_redis_p50))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "sequential": seq,
                    "tasks": aio,
                    "memory": mem,
                    "c_ns": args.c_ns,
                    "c_redis_p50_us": args.c_redis_p50,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
