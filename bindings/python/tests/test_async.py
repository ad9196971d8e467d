"""The asyncio path: futures completed from rl's I/O thread exactly once,
cancellation, closing with calls in flight, and waits that sleep on rl's
timer thread."""

import asyncio
import gc
import time

import pytest

import rl


async def test_cancelled_calls_still_complete_exactly_once(store_url):
    store = rl.open(store_url, inline=False)
    limiter = store.limiter(limit="1000/1h", name="cancel")
    tasks = [asyncio.ensure_future(limiter.aacquire("k")) for _ in range(2000)]
    await asyncio.sleep(0)  # every call started
    for t in tasks[::2]:
        t.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    cancelled = sum(isinstance(r, asyncio.CancelledError) for r in results)
    assert cancelled == 1000
    # librl decided all 2000 once each, whether or not anybody still awaited them
    stats = store.stats()
    verdicts = stats.decisions[rl.Source.STORE]
    deadline = time.monotonic() + 10
    while verdicts.allowed + verdicts.denied < 2000 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # the cancelled ones may still be on their way
        verdicts = store.stats().decisions[rl.Source.STORE]
    assert (verdicts.allowed, verdicts.denied) == (1000, 1000)
    assert limiter.peek("k", 0).remaining == 0
    store.close()


async def test_close_with_calls_in_flight_ends_them_with_shutdown(redis_url, prefix):
    store = rl.open(f"{redis_url}?prefix={prefix}")
    limiter = store.limiter(limit="1/20s", name="closing")  # each waits 20 s
    waits = [asyncio.ensure_future(limiter.aacquire_wait("k", max_wait=30)) for _ in range(50)]
    await asyncio.sleep(0)
    await asyncio.sleep(0.05)  # the first is admitted, the others wait on rl's timers
    started = time.monotonic()
    store.close()
    results = await asyncio.gather(*waits, return_exceptions=True)
    assert time.monotonic() - started < 5
    assert sum(isinstance(r, rl.Decision) and r.allowed for r in results) == 1
    assert sum(isinstance(r, rl.ShutdownError) for r in results) == 49


async def test_aacquire_wait_sleeps_for_the_retry_hint_without_blocking_the_loop():
    async with rl.open("memory://") as store:
        limiter = store.limiter(limit="20/s", burst=1)
        assert (await limiter.aacquire("k")).allowed
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        t = asyncio.ensure_future(ticker())
        started = time.monotonic()
        d = await limiter.aacquire_wait("k", max_wait=5)
        elapsed = time.monotonic() - started
        t.cancel()
        assert d.allowed
        assert 0.03 <= elapsed < 1.0  # one emission interval (50 ms), not a poll loop
        assert ticks >= 3  # the loop ran meanwhile


async def test_aacquire_wait_gives_up_at_once_when_waiting_would_pass_max_wait():
    async with rl.open("memory://") as store:
        limiter = store.limiter(limit="1/1h")
        assert (await limiter.aacquire_wait("k", max_wait=1)).allowed
        started = time.monotonic()
        d = await limiter.aacquire_wait("k", max_wait=1)
        assert not d.allowed and d.retry_after > 3000
        assert time.monotonic() - started < 0.5


async def test_cancelled_waits_admitted_on_the_way_are_refunded_once_by_librl():
    # Each wait is cancelled while librl's admission is on its way: it either
    # finished first (kept) or librl refunds it. The key ends exactly at the
    # units kept: none lost, none refunded twice.
    async with rl.open("memory://?clock=manual") as store:
        limiter = store.limiter(limit="1000/1h")
        kept = 0
        for _ in range(200):
            task = asyncio.ensure_future(limiter.aacquire_wait("k"))
            await asyncio.sleep(0)  # started
            task.cancel()
            try:
                kept += (await task).allowed
            except asyncio.CancelledError:
                pass
        want = 1000 - kept
        remaining = -1
        for _ in range(100000):  # the refunds run on librl's thread: let them in
            remaining = limiter.peek("k", 0).remaining
            assert remaining <= want, f"a refund counted twice ({kept} of 200 kept)"
            if remaining == want:
                break
            await asyncio.sleep(0)
        assert remaining == want, f"a refund lost ({kept} of 200 kept)"


async def test_a_cancelled_sleeping_wait_ends_and_takes_nothing():
    async with rl.open("memory://") as store:
        limiter = store.limiter(limit="1/1h")
        assert (await limiter.aacquire("k")).allowed
        task = asyncio.ensure_future(limiter.aacquire_wait("k", max_wait=7200))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert limiter.peek("k", 0).remaining == 0


def test_a_closed_loop_does_not_break_completion(redis_url, prefix):
    store = rl.open(f"{redis_url}?prefix={prefix}")
    limiter = store.limiter(limit="10/s", name="closedloop")
    loop = asyncio.new_event_loop()
    tasks = [loop.create_task(limiter.aacquire("k")) for _ in range(100)]
    loop.run_until_complete(asyncio.sleep(0))  # started, not finished
    loop.close()  # the completions now find no loop: they are dropped quietly
    store.close()
    del tasks
    gc.collect()


async def test_a_store_dropped_with_calls_in_flight_is_freed_safely(redis_url, prefix):
    store = rl.open(f"{redis_url}?prefix={prefix}")
    limiter = store.limiter(limit="10/s", name="dropped")
    futures = [asyncio.ensure_future(limiter.aacquire("k")) for _ in range(200)]
    await asyncio.sleep(0)
    del store, limiter
    gc.collect()
    results = await asyncio.gather(*futures, return_exceptions=True)
    assert all(isinstance(r, (rl.Decision, rl.ShutdownError)) for r in results)


async def redis_command(url: str, *words: str) -> bytes:
    """One command on a connection of its own (RESP), its first reply line."""
    host, port = url.split("//", 1)[1].split("/")[0].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"*{len(words)}\r\n".encode() + b"".join(f"${len(w)}\r\n{w}\r\n".encode() for w in words))
    await writer.drain()
    line = await reader.readline()
    writer.close()
    return line


async def test_per_call_timeout_reaches_the_store(redis_url, prefix):
    # The store's own timeout is 5 s; the call's is 0.1 s. CLIENT PAUSE holds
    # every command for 0.6 s: the call ends by its own deadline.
    async with await rl.aopen(f"{redis_url}?prefix={prefix}", timeout_ms=5000) as store:
        limiter = store.limiter(limit="10/s", name="deadline")
        await limiter.apeek("k", 0)
        assert await redis_command(redis_url, "CLIENT", "PAUSE", "600", "ALL") == b"+OK\r\n"
        started = time.monotonic()
        with pytest.raises(rl.StoreTimeoutError) as info:
            await limiter.aacquire("k", timeout=0.1)
        assert time.monotonic() - started < 0.5
        assert isinstance(info.value, TimeoutError)
        await asyncio.sleep(0.6)  # the pause is over
        assert await redis_command(redis_url, "CLIENT", "PAUSE", "600", "ALL") == b"+OK\r\n"
        started = time.monotonic()
        with pytest.raises(rl.StoreTimeoutError):
            limiter.acquire("k", timeout=0.1)
        assert time.monotonic() - started < 0.5
        await asyncio.sleep(0.6)
        assert await redis_command(redis_url, "CLIENT", "PAUSE", "600", "ALL") == b"+OK\r\n"
        for reset in (limiter.reset, limiter.areset):
            started = time.monotonic()
            with pytest.raises(rl.StoreTimeoutError):
                result = reset("k", timeout=0.1)
                if asyncio.iscoroutine(result):
                    await result
            assert time.monotonic() - started < 0.5
        await asyncio.sleep(0.6)
        limiter.reset("k", timeout=1.0)  # answered in time: no error
        assert limiter.peek("k", 0).remaining == 10
