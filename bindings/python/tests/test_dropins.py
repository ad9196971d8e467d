"""rl.langchain.RedisRateLimiter (langchain-core's BaseRateLimiter) and
rl.compat.is_allowed (the redis-py sorted-set window)."""

import asyncio
import os
import time

import pytest
from langchain_core.rate_limiters import BaseRateLimiter

import rl
import rl.compat
from rl.langchain import RedisRateLimiter


def test_it_is_a_langchain_rate_limiter(redis_url, prefix):
    with RedisRateLimiter(
        requests_per_second=5, window_size_seconds=2, redis_url=f"{redis_url}?prefix={prefix}"
    ) as lim:
        assert isinstance(lim, BaseRateLimiter)
        assert lim.limit == 10
        assert [lim.acquire(blocking=False) for _ in range(12)].count(True) == 10
        assert lim.get_current_usage() == 10
        lim.reset()
        assert lim.get_current_usage() == 0


def test_processes_share_the_limit_by_limiter_id(redis_url, prefix):
    url = f"{redis_url}?prefix={prefix}"
    a = RedisRateLimiter(requests_per_second=3, window_size_seconds=10, redis_url=url, limiter_id="team")
    b = RedisRateLimiter(requests_per_second=3, window_size_seconds=10, redis_url=url, limiter_id="team")
    other = RedisRateLimiter(requests_per_second=3, window_size_seconds=10, redis_url=url, limiter_id="other")
    admitted = sum(x.acquire(blocking=False) for x in (a, b) * 20)
    assert admitted == 30
    assert other.acquire(blocking=False)
    for x in (a, b, other):
        x.close()


def test_blocking_acquire_sleeps_for_the_retry_hint():
    lim = RedisRateLimiter(requests_per_second=20, window_size_seconds=0.05)  # 1 per 50 ms, in memory
    assert lim.acquire()
    started = time.monotonic()
    assert lim.acquire()  # waits about 50 ms, then is admitted
    assert 0.03 <= time.monotonic() - started < 1.0
    stats = lim._store.stats().decisions[rl.Source.STORE]
    assert stats.denied <= 2  # slept for the hint: one denial, not a polling loop
    lim.close()


async def test_async_twins(redis_url, prefix):
    lim = RedisRateLimiter(
        requests_per_second=20, window_size_seconds=0.1, redis_url=f"{redis_url}?prefix={prefix}"
    )
    # The third call waits for the first entry to leave its window: never
    # before 0.1 s after the first call began (measured from there, not from
    # the wait's start, which a loaded machine may reach late).
    first = time.monotonic()
    assert await lim.aacquire(blocking=False) and await lim.aacquire(blocking=False)
    assert not await lim.aacquire(blocking=False)
    assert await lim.aget_current_usage() == 2
    assert await lim.aacquire()  # a timer on rl's thread; the loop runs on
    assert 0.095 <= time.monotonic() - first < 2.0
    await lim.areset()
    assert await lim.aget_current_usage() == 0
    lim.close()


def test_fallback_to_memory_is_rls_local_fallback():
    dead = "redis://127.0.0.1:1?connect_timeout_ms=50&timeout_ms=50"
    lim = RedisRateLimiter(requests_per_second=2, redis_url=dead)
    assert lim.acquire(blocking=False) and lim.acquire(blocking=False)
    assert not lim.acquire(blocking=False)
    assert lim._store.stats().decisions[rl.Source.LOCAL].allowed == 2
    strict = RedisRateLimiter(requests_per_second=2, redis_url=dead, fallback_to_memory=False)
    with pytest.raises(rl.BackendUnavailableError):
        strict.acquire(blocking=False)
    lim.close()
    strict.close()


def test_cluster_mode_shares_one_limit_on_a_real_cluster(prefix):
    url = os.environ.get("RL_TEST_CLUSTER_URL")
    if not url:
        pytest.skip("RL_TEST_CLUSTER_URL is not set (run under scripts/with-redis)")
    # The seed's form: redis:// and the nodes, with cluster_mode=True.
    nodes = "redis://" + url.split("://", 1)[1] + f"?prefix={prefix}"
    a = RedisRateLimiter(requests_per_second=1, window_size_seconds=3, redis_url=nodes, cluster_mode=True)
    b = RedisRateLimiter(requests_per_second=1, window_size_seconds=3, redis_url=nodes, cluster_mode=True)
    assert [x.acquire(blocking=False) for x in (a, b, a, b, a)] == [True] * 3 + [False] * 2
    assert "cluster" in repr(a._store) and "rl-cluster-password" not in repr(a._store)
    a.close()
    b.close()


def test_cluster_mode_and_bad_arguments_raise_clear_errors():
    with pytest.raises(rl.InvalidArgumentError, match="cluster_mode: needs redis_url"):
        RedisRateLimiter(cluster_mode=True)
    with pytest.raises(rl.InvalidArgumentError, match="cluster_mode: redis_url must start"):
        RedisRateLimiter(cluster_mode=True, redis_url="memory://")
    with pytest.raises(TypeError, match="cluster_mode"):
        RedisRateLimiter(cluster_mode="yes")
    with pytest.raises(rl.InvalidArgumentError, match="requests_per_second"):
        RedisRateLimiter(requests_per_second=0)
    with pytest.raises(rl.InvalidArgumentError, match="window"):
        RedisRateLimiter(window_size_seconds=-1)
    with pytest.raises(TypeError, match="requests_per_second"):
        RedisRateLimiter(requests_per_second="10")
    with pytest.raises(rl.InvalidArgumentError, match="limiter_id"):
        RedisRateLimiter(limiter_id="")
    with pytest.raises(TypeError):
        RedisRateLimiter(redis_client=object())  # the seed's client object is not taken: give redis_url
    half = RedisRateLimiter(requests_per_second=0.5)
    assert half._limiter.limits[0] == rl.Limit(1, 2.0, 1)
    half.close()


def test_is_allowed_is_an_exact_sliding_window(redis_url, prefix):
    rl.compat.configure(redis_url, prefix=prefix, clock="manual")
    assert [rl.compat.is_allowed("user123", limit=3, window=60) for _ in range(5)] == [True] * 3 + [False] * 2
    assert rl.compat.is_allowed("user456", limit=3, window=60)
    assert asyncio.run(rl.compat.ais_allowed("user456", limit=3, window=60))
    with pytest.raises(TypeError, match="user_id"):
        rl.compat.is_allowed(42)
    with pytest.raises(rl.InvalidArgumentError, match="window"):
        rl.compat.is_allowed("u", limit=3, window=0)
    rl.compat.configure("memory://")
    assert rl.compat.is_allowed("user123", limit=3, window=60)
