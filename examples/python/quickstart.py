#!/usr/bin/env python3
"""rl's Python quick start: five requests per second on one key, sync and
asyncio. Runs on memory:// by default; pass a Redis URL to share the limit
between processes:

    python examples/python/quickstart.py [redis://127.0.0.1:6379]
"""

import asyncio
import sys

import rl


def sync_part(url: str) -> None:
    with rl.open(url) as store:
        limiter = store.limiter(algorithm="gcra", limit="5/s", name="quickstart")
        limiter.reset("user:42")
        for i in range(1, 8):
            d = limiter.acquire("user:42")
            print(f"{i}: allowed={d.allowed} remaining={d.remaining} retry_after={d.retry_after:.3f}s")


async def async_part(url: str) -> None:
    async with await rl.aopen(url) as store:
        limiter = store.limiter(limit="5/s", name="quickstart-async")
        await limiter.areset("user:42")
        decisions = await asyncio.gather(*(limiter.aacquire("user:42") for _ in range(7)))
        print("async:", sum(d.allowed for d in decisions), "of 7 allowed")
        d = await limiter.aacquire_wait("user:42", max_wait=1.0)  # sleeps for the retry hint
        print("after waiting:", d.allowed)


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "memory://"
    sync_part(url)
    asyncio.run(async_part(url))
