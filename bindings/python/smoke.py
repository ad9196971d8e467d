"""The wheel smoke's decisions (bindings/python/smoke, smoke-qemu), run by the
installed package from outside the repository:
    python smoke.py URL KEY DIR
DIR: where rl must be imported from (the fresh venv, or the unpacked wheel).
7 attempts at 5/1h on URL, sync and async: 5 admitted, 2 denied each; and a
bad limit raises InvalidArgumentError (a C++ exception inside librl, which
the module's unwinder must carry to the C ABI)."""

import asyncio
import sys

import rl

url, key, home = sys.argv[1], sys.argv[2], sys.argv[3]
assert rl.__file__.startswith(home), f"rl imported from {rl.__file__}, not from {home}"


async def aacquire_all(limiter, key, n):
    return [await limiter.aacquire(key) for _ in range(n)]


with rl.open(url) as store:
    limiter = store.limiter(limit="5/1h", name="smoke")
    sync = [limiter.acquire(key + ":sync").allowed for _ in range(7)]
    asynchronous = [d.allowed for d in asyncio.run(aacquire_all(limiter, key + ":async", 7))]
for how, got in (("sync", sync), ("async", asynchronous)):
    assert got == [True] * 5 + [False] * 2, f"{how}: {got}"
# librl's C++ throws inside for a bad value and its C ABI returns the error: the
# module's unwinder (libgcc_s) must carry it.
try:
    rl.open("memory://").limiter(limit="5/fortnight")
    raise AssertionError("a bad limit was taken")
except rl.InvalidArgumentError as e:
    refused = str(e)
print(f"librl {rl.LIBRARY_VERSION}: 5 admitted, 2 denied (sync and async); refused: {refused}")
