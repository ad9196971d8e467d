"""acquire_batch(return_exceptions=True) and its async twin: each request's
decision, or its exception in its place (as asyncio.gather gives them), on
both backends, sync, inline and through rl's I/O thread; on a store that is
down, and on Redis where a key of the wrong type fails its request alone."""

import subprocess

import pytest

import rl

DEAD_URL = "redis://127.0.0.1:1?clock=manual"


def batch_each(limiter, requests, how):
    """The results of one batch with return_exceptions=True, by `how`."""
    import asyncio

    if how == "sync":
        return limiter.acquire_batch(requests, return_exceptions=True)
    return asyncio.run(limiter.aacquire_batch(requests, return_exceptions=True))


HOWS = ["sync", "async"]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("inline", [True, False])
def test_every_request_decided_like_single_acquires(store_url, how, inline):
    requests = ["a", "a", "a", ("b", 2)]
    with rl.open(store_url, inline=inline) as batch_store, rl.open(store_url) as single_store:
        # One prefix serves every parameter: names of their own keep them apart.
        name = f"{how}-{inline}"
        results = batch_each(batch_store.limiter(limit="2/1h", name=f"batch-{name}"), requests, how)
        single = single_store.limiter(limit="2/1h", name=f"single-{name}")
        expected = [single.acquire(*(r if isinstance(r, tuple) else (r,))) for r in requests]
    assert results == expected
    assert [d.allowed for d in results] == [True, True, False, True]  # a denial is a decision


@pytest.mark.parametrize("how", HOWS)
def test_a_malformed_batch_raises_and_decides_nothing(how):
    with rl.open("memory://?clock=manual", inline=False) as store:
        limiter = store.limiter(limit="10/1h")
        with pytest.raises(rl.InvalidArgumentError, match="count"):
            batch_each(limiter, [], how)
        with pytest.raises(rl.InvalidArgumentError, match=r"requests\[1\]\.key"):
            batch_each(limiter, ["k", ""], how)
        with pytest.raises(rl.InvalidArgumentError, match=r"requests\[1\]\.cost"):
            batch_each(limiter, ["k", ("k", 0)], how)
        with pytest.raises(TypeError):
            batch_each(limiter, "k", how)
        assert limiter.peek("k", 0).remaining == 10
    with pytest.raises(rl.ShutdownError):
        batch_each(limiter, ["k"], how)


@pytest.mark.parametrize("how", HOWS)
def test_an_outage_fails_every_request_with_its_error(how):
    with rl.open(DEAD_URL) as store:
        results = batch_each(store.limiter(limit="5/s"), ["a", "b"], how)
    assert len(results) == 2
    for r in results:
        assert isinstance(r, rl.BackendUnavailableError) and str(r)
    # Without return_exceptions the same failure raises for the batch.
    with rl.open(DEAD_URL) as store, pytest.raises(rl.BackendUnavailableError):
        store.limiter(limit="5/s").acquire_batch(["a", "b"])


@pytest.mark.parametrize("how", HOWS)
def test_on_failure_open_decides_every_request(how):
    with rl.open(DEAD_URL) as store:
        results = batch_each(store.limiter(limit="5/s", on_failure="open"), ["a", "b"], how)
    assert [(d.allowed, d.source) for d in results] == [(True, rl.Source.FAIL_OPEN)] * 2


@pytest.mark.parametrize("how", HOWS)
def test_redis_key_of_the_wrong_type_fails_its_request_alone(redis_url, prefix, how):
    def redis_cli(*args):
        out = subprocess.run(
            ["redis-cli", "-u", redis_url, "--no-auth-warning", *args],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout.strip()

    prefix = f"{prefix}-{how}"
    with rl.open(f"{redis_url}?prefix={prefix}") as store:
        limiter = store.limiter(limit="5/s", name="each")
        limiter.acquire("broken")
        keys = redis_cli("--scan", "--pattern", f"{prefix}:*").split("\n")
        assert len(keys) == 1
        redis_cli("DEL", keys[0])
        redis_cli("SADD", keys[0], "x")  # a type no script reads
        a, broken, b = batch_each(limiter, ["a", "broken", ("b", 2)], how)
    assert a.remaining == 4 and b.remaining == 3
    assert isinstance(broken, rl.BackendError) and "WRONGTYPE" in str(broken)
