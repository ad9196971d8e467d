"""rl under LangChain: a BaseRateLimiter that shares one limit across every
process using the same Redis (or memory:// in one process).

    from rl.langchain import RedisRateLimiter
    limiter = RedisRateLimiter(requests_per_second=10, redis_url="redis://127.0.0.1:6379")
    model = ChatOpenAI(rate_limiter=limiter)

Needs langchain-core (``pip install rl[langchain]``).
"""

from __future__ import annotations

import math
from typing import Any, Optional

try:
    from langchain_core.rate_limiters import BaseRateLimiter
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("rl.langchain needs langchain-core: pip install langchain-core") from e

from . import store as _store
from ._rate import per_second
from .decision import Decision
from .errors import invalid

# The key of the limiters that are not given a limiter_id.
_DEFAULT_ID = "langchain"


def _cluster_url(redis_url: Optional[str]) -> str:
    """The URL of cluster_mode=True: the scheme says Cluster (the rest is
    the core's to read)."""
    if not isinstance(redis_url, str):
        raise invalid("cluster_mode: needs redis_url, the cluster's nodes")
    for plain, cluster in (("redis://", "redis+cluster://"), ("rediss://", "rediss+cluster://")):
        if redis_url.startswith(plain):
            return cluster + redis_url[len(plain):]
    if redis_url.startswith(("redis+cluster://", "rediss+cluster://")):
        return redis_url
    raise invalid("cluster_mode: redis_url must start with redis:// or rediss://")


class RedisRateLimiter(BaseRateLimiter):
    """requests_per_second over a sliding window of window_size_seconds,
    counted exactly (rl's sliding_log) in Redis, so every process with the
    same redis_url and limiter_id shares it.

    floor(requests_per_second * window_size_seconds) requests are admitted
    per window; when that is not whole the window is adjusted to keep the
    rate (1.5/s over 1 s is 1 per 0.667 s; 0.5/s is 1 per 2 s).
    redis_url: "redis://host:port[/db]" (with rl's settings as query
        parameters); None keeps the limit in this process (memory://).
    limiter_id: what the processes share the limit by (its key); default
        "langchain".
    fallback_to_memory: during a Redis outage an in-process limiter with the
        same rate decides (rl's on_failure="local"); False raises
        rl.BackendUnavailableError / rl.StoreTimeoutError instead.
    cluster_mode: redis_url names nodes of a Redis Cluster
        ("redis://node1:7000,node2:7000", or rediss:// for TLS): the limit
        lives on the master that serves its key's slot. A redis+cluster://
        or rediss+cluster:// URL says so by itself.

    acquire(blocking=True) sleeps for the retry hint rl gives and tries
    again (a timer on rl's thread for aacquire), never polling.
    """

    def __init__(
        self,
        *,
        requests_per_second: float = 1.0,
        window_size_seconds: float = 1.0,
        redis_url: Optional[str] = None,
        limiter_id: Optional[str] = None,
        fallback_to_memory: bool = True,
        cluster_mode: bool = False,
    ) -> None:
        if not isinstance(cluster_mode, bool):
            raise TypeError("cluster_mode: must be bool")
        if cluster_mode:
            redis_url = _cluster_url(redis_url)
        if not isinstance(fallback_to_memory, bool):
            raise TypeError("fallback_to_memory: must be bool")
        if limiter_id is not None and not isinstance(limiter_id, str):
            raise TypeError("limiter_id: must be str")
        if limiter_id == "":
            raise invalid("limiter_id: is empty")
        limit = per_second(requests_per_second, window_size_seconds)
        self.requests_per_second = requests_per_second
        self.window_size_seconds = window_size_seconds
        self.limiter_id = limiter_id or _DEFAULT_ID
        self.fallback_to_memory = fallback_to_memory
        self.cluster_mode = cluster_mode
        self._store = _store.open(redis_url or "memory://")
        self._limiter = self._store.limiter(
            algorithm="sliding_log",
            limit=limit,
            name="langchain",
            on_failure="local" if fallback_to_memory else "closed",
        )
        self._key = self.limiter_id

    @property
    def limit(self) -> int:
        """Requests admitted per window."""
        return self._limiter.limits[0].limit

    # --- BaseRateLimiter ---
    def acquire(self, *, blocking: bool = True) -> bool:
        if not blocking:
            return self._limiter.acquire(self._key).allowed
        # rl sleeps for the retry hint and tries again until admitted; a denial
        # comes back only where waiting cannot help (a clock=manual store).
        return self._limiter.acquire_wait(self._key, max_wait=math.inf).allowed

    async def aacquire(self, *, blocking: bool = True) -> bool:
        if not blocking:
            return (await self._limiter.aacquire(self._key)).allowed
        return (await self._limiter.aacquire_wait(self._key, max_wait=math.inf)).allowed

    # --- the seed's extras ---
    def get_current_usage(self) -> int:
        """Requests counted in the current window."""
        return self._usage(self._limiter.peek(self._key, 0))

    async def aget_current_usage(self) -> int:
        return self._usage(await self._limiter.apeek(self._key, 0))

    def reset(self) -> None:
        """Forgets every request counted: the whole limit is free again."""
        self._limiter.reset(self._key)

    async def areset(self) -> None:
        await self._limiter.areset(self._key)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "RedisRateLimiter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @staticmethod
    def _usage(d: Decision) -> int:
        return d.limit - d.remaining
