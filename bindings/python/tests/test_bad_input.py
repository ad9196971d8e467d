"""Bad input for every method raises the documented exception, never a
crash: TypeError for a wrong Python type (before librl), InvalidArgumentError
(RL_E_INVALID_ARG, a ValueError) for a value librl or the binding refuses,
ShutdownError after close()."""

import asyncio
import math

import pytest

import rl

WRONG_KEYS = [None, 1, 1.5, ["k"], bytearray(b"k"), object()]
# Values of the right type that librl refuses, and the word its message names.
REFUSED_KEYS = [("", "key"), ("x" * 513, "key"), (b"y" * 513, "key"), ("\ud800", "key")]
WRONG_COSTS = ["1", 1.5, None, True, b"1"]
REFUSED_COSTS = [(0, "cost"), (-1, "cost"), (2**63, "cost"), (-(2**63) - 1, "cost")]

DECIDING = ["acquire", "peek", "refund", "acquire_wait"]


@pytest.fixture
def limiter():
    with rl.open("memory://?clock=manual") as store:
        yield store.limiter(limit="10/s")


@pytest.fixture
def io_limiter():
    """memory:// through rl's I/O thread, as async calls on Redis go."""
    with rl.open("memory://?clock=manual", inline=False) as store:
        yield store.limiter(limit="10/s")


def call(limiter, method, *args, **kwargs):
    if method.startswith("a") and method not in ("acquire", "acquire_batch", "acquire_wait"):
        return asyncio.run(getattr(limiter, method)(*args, **kwargs))
    return getattr(limiter, method)(*args, **kwargs)


ALL_KEYED = DECIDING + ["reset"] + ["a" + m for m in DECIDING] + ["areset"]


@pytest.mark.parametrize("method", ALL_KEYED)
@pytest.mark.parametrize("key", WRONG_KEYS, ids=repr)
def test_a_key_of_the_wrong_type_is_a_type_error(limiter, io_limiter, method, key):
    for lim in (limiter, io_limiter):
        with pytest.raises(TypeError, match="key"):
            call(lim, method, key)


@pytest.mark.parametrize("method", ALL_KEYED)
@pytest.mark.parametrize("key,word", REFUSED_KEYS, ids=lambda v: repr(v)[:12])
def test_a_refused_key_is_invalid_argument(limiter, io_limiter, method, key, word):
    for lim in (limiter, io_limiter):
        with pytest.raises(rl.InvalidArgumentError, match=word) as info:
            call(lim, method, key)
        assert info.value.status == "RL_E_INVALID_ARG"
        assert info.value.code == 1
        assert isinstance(info.value, ValueError)


COSTED = DECIDING + ["a" + m for m in DECIDING]


@pytest.mark.parametrize("method", ["reset", "areset"])
def test_reset_timeouts(limiter, io_limiter, method):
    for lim in (limiter, io_limiter):
        with pytest.raises(rl.InvalidArgumentError, match="timeout"):
            call(lim, method, "k", timeout=-1)
        with pytest.raises(TypeError, match="timeout"):
            call(lim, method, "k", timeout="1")
        with pytest.raises(rl.InvalidArgumentError, match="key"):
            call(lim, method, "", timeout=1)
        with pytest.raises(TypeError, match="key"):
            call(lim, method, 5, timeout=1)
        lim.acquire("k")
        call(lim, method, "k", timeout=1)
        assert lim.peek("k", 0).remaining == 10


@pytest.mark.parametrize("method", COSTED)
@pytest.mark.parametrize("cost", WRONG_COSTS, ids=repr)
def test_a_cost_of_the_wrong_type_is_a_type_error(limiter, method, cost):
    with pytest.raises(TypeError, match="cost"):
        call(limiter, method, "k", cost)


@pytest.mark.parametrize("method", COSTED)
@pytest.mark.parametrize("cost,word", REFUSED_COSTS, ids=repr)
def test_a_refused_cost_is_invalid_argument(limiter, io_limiter, method, cost, word):
    if cost == 0 and method.endswith("peek"):
        return  # peek takes cost 0: the key's state without a request
    for lim in (limiter, io_limiter):
        with pytest.raises(rl.InvalidArgumentError, match=word):
            call(lim, method, "k", cost)


@pytest.mark.parametrize("method", COSTED)
@pytest.mark.parametrize("timeout", [-1, 0, math.nan, -math.inf, -(10**400)])
def test_a_refused_timeout_is_invalid_argument(limiter, method, timeout):
    with pytest.raises(rl.InvalidArgumentError, match="timeout"):
        call(limiter, method, "k", 1, timeout=timeout)


@pytest.mark.parametrize("method", COSTED)
def test_a_timeout_of_the_wrong_type_is_a_type_error(limiter, method):
    with pytest.raises(TypeError, match="timeout"):
        call(limiter, method, "k", 1, timeout="1s")


@pytest.mark.parametrize("method", ["acquire_wait", "aacquire_wait"])
def test_a_refused_max_wait_is_invalid_argument(limiter, method):
    for bad in (-1, math.nan):
        with pytest.raises(rl.InvalidArgumentError, match="max_wait"):
            call(limiter, method, "k", 1, max_wait=bad)
    with pytest.raises(TypeError, match="max_wait"):
        call(limiter, method, "k", 1, max_wait=None)


@pytest.mark.parametrize("method", ["acquire_batch", "aacquire_batch"])
def test_bad_batches(limiter, io_limiter, method):
    for lim in (limiter, io_limiter):
        run = (
            (lambda b: asyncio.run(lim.aacquire_batch(b)))
            if method == "aacquire_batch"
            else lim.acquire_batch
        )
        with pytest.raises(rl.InvalidArgumentError, match="count|empty|batch"):
            run([])
        with pytest.raises(rl.InvalidArgumentError):
            run(["k"] * (rl.MAX_BATCH + 1))
        with pytest.raises(TypeError):
            run("k")
        with pytest.raises(TypeError):
            run(None)
        with pytest.raises(TypeError):
            run([("k", 1, 2)])
        with pytest.raises(TypeError, match="key"):
            run(["ok", 5])
        with pytest.raises(TypeError, match="cost"):
            run([("ok", "1")])
        with pytest.raises(rl.InvalidArgumentError, match="1"):  # the message names the index
            run(["ok", ""])
        # nothing was decided: "ok" still has its whole capacity
        assert lim.peek("ok", 0).remaining == 10


def test_bad_settings(limiter):
    store = limiter.store
    with pytest.raises(rl.InvalidArgumentError, match="algorithm"):
        store.limiter(limit="1/s", algorithm="leaky")
    with pytest.raises(rl.InvalidArgumentError, match="rate"):
        store.limiter(limit="1/s", rate="1")
    with pytest.raises(rl.InvalidArgumentError, match="limit"):
        store.limiter()
    with pytest.raises(rl.InvalidArgumentError, match="name: contains a NUL byte"):
        store.limiter(limit="1/s", name="a\0b")
    with pytest.raises(TypeError, match="burst"):
        store.limiter(limit="1/s", burst=True)
    with pytest.raises(rl.InvalidArgumentError, match="limit"):
        store.limiter(limit=1.5)  # a float reaches librl as "1.5", which is no limit
    with pytest.raises(TypeError, match="limit"):
        store.limiter(limit={"10/s"})
    with pytest.raises(rl.InvalidArgumentError, match="local_share"):
        store.limiter(limit="1/s", on_failure="local", local_share=float("nan"))
    assert store.limiter(limit="8/s", on_failure="local", local_share=0.25).name == "default"
    # A list of limits and bursts is joined the way librl reads it.
    two = store.limiter(limit=["10/s", "100/h"], burst=[5, 50])
    assert [(x.limit, x.window, x.burst) for x in two.limits] == [(10, 1.0, 5), (100, 3600.0, 50)]


def test_bad_urls_and_store_settings():
    with pytest.raises(rl.InvalidArgumentError, match="scheme|url|URL"):
        rl.open("http://example.com")
    with pytest.raises(rl.InvalidArgumentError, match="url: contains a NUL byte"):
        rl.open("memory://\0")
    with pytest.raises(TypeError, match="url"):
        rl.open(None)
    with pytest.raises(rl.InvalidArgumentError, match="timeout_ms"):
        rl.open("memory://", timeout_ms=0)
    with pytest.raises(rl.InvalidArgumentError, match="clock"):
        rl.open("memory://?clock=sundial")
    with pytest.raises(TypeError, match="inline"):
        rl.open("memory://", inline="yes")
    with rl.open("memory://") as store:
        with pytest.raises(rl.InvalidArgumentError, match="clock"):
            store.clock_advance(1)
    with rl.open("memory://?clock=manual") as store:
        with pytest.raises(rl.InvalidArgumentError):
            store.clock_advance(-1)
        with pytest.raises(TypeError):
            store.clock_set("0")


def test_every_call_after_close_is_shutdown():
    store = rl.open("memory://?clock=manual", inline=False)
    limiter = store.limiter(limit="10/s")
    store.close()
    store.close()  # idempotent
    assert store.closed
    for method in [
        "acquire",
        "peek",
        "refund",
        "acquire_wait",
        "reset",
        "aacquire",
        "apeek",
        "arefund",
        "areset",
        "aacquire_wait",
    ]:
        with pytest.raises(rl.ShutdownError):
            call(limiter, method, "k")
    with pytest.raises(rl.ShutdownError):
        limiter.acquire_batch(["k"])
    with pytest.raises(rl.ShutdownError):
        asyncio.run(limiter.aacquire_batch(["k"]))
    with pytest.raises(rl.ShutdownError):  # a limiter made after close() fails its calls
        store.limiter(limit="1/s").acquire("k")
    assert store.stats().healthy  # stats work after close


def test_the_native_layer_refuses_bad_handles():
    with pytest.raises(rl.InvalidArgumentError, match="limiter: is NULL"):
        rl.native.rl_limiter_acquire(None, ("k", 1, 0))
    with pytest.raises(TypeError):
        rl.native.rl_limiter_acquire("not a handle", ("k", 1, 0))
    with rl.open("memory://") as store:
        limiter = store.limiter(limit="1/s")
        with pytest.raises(TypeError, match="request"):
            rl.native.rl_limiter_acquire(limiter._handle, ("k", 1))
        with pytest.raises(TypeError, match="request"):
            rl.native.rl_limiter_acquire(limiter._handle, ["k", 1, 0])
