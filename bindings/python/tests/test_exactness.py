"""Many threads, processes and asyncio tasks on ONE key admit exactly the
limit: counted, on a manual clock (time does not move, so nothing refills)."""

import asyncio
import multiprocessing
import os
import threading

import pytest

import rl

LIMIT = 500


def hammer(limiter: rl.Limiter, attempts: int, admitted: list, start: threading.Barrier) -> None:
    start.wait()
    n = 0
    for _ in range(attempts):
        if limiter.acquire("shared").allowed:
            n += 1
    admitted.append(n)


@pytest.mark.parametrize("algorithm", ["gcra", "sliding_log", "fixed_window"])
def test_threads_on_one_key_admit_exactly_the_limit(store_url, algorithm):
    threads, attempts = 8, 200  # 1600 attempts for 500 units
    with rl.open(store_url) as store:
        limiter = store.limiter(algorithm=algorithm, limit=f"{LIMIT}/1h", name=f"t{algorithm}")
        admitted: list = []
        start = threading.Barrier(threads)
        workers = [
            threading.Thread(target=hammer, args=(limiter, attempts, admitted, start)) for _ in range(threads)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert sum(admitted) == LIMIT
        assert limiter.peek("shared", 0).remaining == 0


def process_worker(url: str, attempts: int, ready, go, results) -> None:
    with rl.open(url) as store:
        limiter = store.limiter(limit=f"{LIMIT}/1h", name="procs")
        limiter.peek("shared", 0)  # connected before the start
        ready.put(os.getpid())
        go.wait()
        results.put(sum(limiter.acquire("shared").allowed for _ in range(attempts)))


def test_processes_on_one_redis_key_admit_exactly_the_limit(redis_url, prefix):
    # Each process opens its own store: they share the limit only through Redis.
    url = f"{redis_url}?clock=manual&prefix={prefix}"
    ctx = multiprocessing.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=process_worker, args=(url, 300, ready, go, results)) for _ in range(4)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=60)
    go.set()
    total = sum(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert total == LIMIT


async def test_10000_concurrent_aacquire_admit_exactly_the_limit(redis_url, prefix):
    async with rl.open(f"{redis_url}?clock=manual&prefix={prefix}") as store:
        limiter = store.limiter(limit="5000/1h", name="tasks")
        decisions = await asyncio.gather(*(limiter.aacquire("shared") for _ in range(10_000)))
        assert sum(d.allowed for d in decisions) == 5000
        assert all(d.retry_after > 0 for d in decisions if not d.allowed)
        stats = store.stats()
        assert stats.decisions[rl.Source.STORE] == rl.Verdicts(allowed=5000, denied=5000)


async def test_10000_concurrent_aacquire_through_the_io_thread_of_memory():
    async with rl.open("memory://?clock=manual", inline=False) as store:
        limiter = store.limiter(limit="5000/1h")
        decisions = await asyncio.gather(*(limiter.aacquire("shared") for _ in range(10_000)))
        assert sum(d.allowed for d in decisions) == 5000


async def test_async_batches_admit_exactly_the_limit(store_url):
    async with rl.open(store_url, inline=False) as store:
        limiter = store.limiter(limit=f"{LIMIT}/1h", name="batch")
        batches = await asyncio.gather(*(limiter.aacquire_batch(["shared"] * 10) for _ in range(100)))
        assert sum(d.allowed for batch in batches for d in batch) == LIMIT
