"""Limiters: acquire, peek, refund, reset, batches and waits, sync and async.

The sync methods block the calling thread for one store round trip (none
for memory://) with the GIL released. The async twins (``aacquire``, ...)
start the call on rl's I/O thread and await its completion; on a memory://
store opened with inline=True they answer at once instead.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from typing import TYPE_CHECKING, Any, Iterable, Literal, Optional, Tuple, Union, cast, overload

from . import native
from ._completion import queue_of
from .decision import Decision, Limit
from .errors import RateLimitError, invalid

if TYPE_CHECKING:
    from .store import Store

Key = Union[str, bytes]
#: A batch item: a key (cost 1) or (key, cost).
BatchItem = Union[Key, Tuple[Key, int]]

_OP_ACQUIRE, _OP_PEEK, _OP_REFUND, _OP_RESET = (
    native.RL_OP_ACQUIRE,
    native.RL_OP_PEEK,
    native.RL_OP_REFUND,
    native.RL_OP_RESET,
)
# SWIG's functions themselves, without native.py's Python wrapper (a frame per
# call) around each: for the per-request paths.
_native = native._native
# librl's longest wait (2^52 us): "no deadline", and the cap of any longer one.
_MAX_WAIT_US = native.RL_MAX_WAIT_US


def make_config(settings: dict[str, str]) -> Any:
    cfg = native.rl_config_new()
    if cfg is None:
        raise MemoryError("rl_config_new")
    try:
        for k, v in settings.items():
            native.rl_config_set(cfg, k, v)
    except BaseException:
        native.rl_config_free(cfg)
        raise
    return cfg


def _seconds_to_us(what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what}: must be seconds (int or float), not {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:  # an int beyond float: longer than any wait rl keeps
        seconds = math.inf if value > 0 else -math.inf
    if math.isnan(seconds):
        raise invalid(f"{what}: is NaN")
    if seconds == math.inf:
        return _MAX_WAIT_US
    if seconds < 0:
        raise invalid(f"{what}: {seconds!r} is negative")
    return min(_MAX_WAIT_US, math.ceil(seconds * 1_000_000))


def _timeout_us(timeout: Optional[float]) -> int:
    """A call's own deadline (rl_request.timeout_us): None is the store's
    timeout_ms alone."""
    if timeout is None:
        return 0
    us = _seconds_to_us("timeout", timeout)
    if us == 0:
        raise invalid("timeout: must be more than 0 seconds (None: the store's timeout_ms)")
    return us


class Limiter:
    """A limiter over a store, made by Store.limiter(). Keys are str (their
    UTF-8 bytes) or bytes, 1 to 512 bytes; costs are ints (int64)."""

    def __init__(self, store: "Store", handle: Any, settings: dict[str, str], inline: bool) -> None:
        self._store = store  # keeps the store open while its limiters live
        self._handle = handle
        self._inline = inline
        #: The settings it was made with, as librl got them.
        self.settings: dict[str, str] = dict(settings)
        #: Its name as librl holds it ("default" when not set).
        self.name: str = native.rl_limiter_name(handle)
        #: Its limits as librl parsed them.
        self._limit_infos: list[tuple[int, int, int]] = native.rl_limiter_limits(handle)
        self.limits: list[Limit] = [Limit(n, w / 1_000_000, b) for n, w, b in self._limit_infos]
        self._finalizer = weakref.finalize(self, native.rl_limiter_free, handle)

    def __repr__(self) -> str:
        return f"<rl.Limiter {self.name} {self.settings.get('limit', '')!r} on {self._store.url}>"

    def _forked(self, closed_limiter: Any) -> None:
        """See Store._forked."""
        self._finalizer.detach()
        self._handle = closed_limiter

    @property
    def store(self) -> "Store":
        return self._store

    # ---------------------------------------------------------------- sync
    def acquire(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """Decides one request and records its cost when allowed.
        timeout: this call's own deadline in seconds (StoreTimeoutError)."""
        return native.rl_limiter_acquire(
            self._handle, (key, cost, 0 if timeout is None else _timeout_us(timeout))
        )

    def peek(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """The decision acquire would give, recording nothing (cost 0: the key's state)."""
        return native.rl_limiter_peek(
            self._handle, (key, cost, 0 if timeout is None else _timeout_us(timeout))
        )

    def refund(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """Gives cost units back (never beyond capacity); the key's state afterwards."""
        return native.rl_limiter_refund(
            self._handle, (key, cost, 0 if timeout is None else _timeout_us(timeout))
        )

    def reset(self, key: Key, *, timeout: Optional[float] = None) -> None:
        """Forgets the key: it is back to full capacity.
        timeout: this call's own deadline in seconds (StoreTimeoutError)."""
        if timeout is None:
            native.rl_limiter_reset(self._handle, key)
        else:  # rl_limiter_reset takes no request: the async form, waited for, does
            native.call_blocking(self._handle, _OP_RESET, (key, 1, _timeout_us(timeout)))

    @overload
    def acquire_batch(
        self,
        requests: Iterable[BatchItem],
        *,
        timeout: Optional[float] = None,
        return_exceptions: Literal[False] = False,
    ) -> list[Decision]: ...

    @overload
    def acquire_batch(
        self, requests: Iterable[BatchItem], *, timeout: Optional[float] = None, return_exceptions: bool
    ) -> list[Union[Decision, RateLimitError]]: ...

    def acquire_batch(
        self,
        requests: Iterable[BatchItem],
        *,
        timeout: Optional[float] = None,
        return_exceptions: bool = False,
    ) -> Union[list[Decision], list[Union[Decision, RateLimitError]]]:
        """Acquires many requests (keys, or (key, cost) pairs) in one round
        trip per store node; one decision each, in order. A request that
        fails raises its error for the whole batch, unless return_exceptions
        is true: then, as with asyncio.gather, its exception takes its place
        in the list and the others keep their decisions (librl's
        rl_limiter_acquire_batch_each). A malformed batch raises either way,
        with nothing decided."""
        batch = self._batch(requests, timeout)
        if return_exceptions:
            return native.rl_limiter_acquire_batch_each(self._handle, batch)
        return native.rl_limiter_acquire_batch(self._handle, batch)

    def acquire_wait(
        self, key: Key, cost: int = 1, *, max_wait: float = math.inf, timeout: Optional[float] = None
    ) -> Decision:
        """Acquires, and while denied sleeps for the retry hint and tries again,
        for at most max_wait seconds. Returns the denial at once when waiting
        would pass max_wait, when the request can never be admitted
        (retry_after -1.0), or on a clock=manual store. Blocks the thread
        (GIL released): use aacquire_wait in asyncio code."""
        request = (key, cost, _timeout_us(timeout))
        wait_us = _seconds_to_us("max_wait", max_wait)
        return native.rl_limiter_acquire_wait(self._handle, request, wait_us)

    # --------------------------------------------------------------- async
    async def aacquire(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """acquire() without blocking the event loop."""
        return cast(Decision, await self._call(_OP_ACQUIRE, key, cost, timeout))

    async def apeek(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """peek() without blocking the event loop."""
        return cast(Decision, await self._call(_OP_PEEK, key, cost, timeout))

    async def arefund(self, key: Key, cost: int = 1, *, timeout: Optional[float] = None) -> Decision:
        """refund() without blocking the event loop."""
        return cast(Decision, await self._call(_OP_REFUND, key, cost, timeout))

    async def areset(self, key: Key, *, timeout: Optional[float] = None) -> None:
        """reset() without blocking the event loop."""
        await self._call(_OP_RESET, key, 1, timeout)

    @overload
    async def aacquire_batch(
        self,
        requests: Iterable[BatchItem],
        *,
        timeout: Optional[float] = None,
        return_exceptions: Literal[False] = False,
    ) -> list[Decision]: ...

    @overload
    async def aacquire_batch(
        self, requests: Iterable[BatchItem], *, timeout: Optional[float] = None, return_exceptions: bool
    ) -> list[Union[Decision, RateLimitError]]: ...

    async def aacquire_batch(
        self,
        requests: Iterable[BatchItem],
        *,
        timeout: Optional[float] = None,
        return_exceptions: bool = False,
    ) -> Union[list[Decision], list[Union[Decision, RateLimitError]]]:
        """acquire_batch() without blocking the event loop."""
        batch = self._batch(requests, timeout)
        if self._inline:
            if return_exceptions:
                return native.rl_limiter_acquire_batch_each(self._handle, batch)
            return native.rl_limiter_acquire_batch(self._handle, batch)
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[Any]" = loop.create_future()
        start = native.acquire_batch_each_async if return_exceptions else native.acquire_batch_async
        start(self._handle, batch, queue_of(loop), fut)
        return cast(Union[list[Decision], list[Union[Decision, RateLimitError]]], await fut)

    async def aacquire_wait(
        self, key: Key, cost: int = 1, *, max_wait: float = math.inf, timeout: Optional[float] = None
    ) -> Decision:
        """acquire_wait() as a timer on rl's thread: no thread sleeps, the
        event loop runs on. Cancelling it cancels the await and librl's wait
        (rl_wait_cancel): an admission nobody took is refunded, once."""
        request = (key, cost, _timeout_us(timeout))
        wait_us = _seconds_to_us("max_wait", max_wait)
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[Decision]" = loop.create_future()
        wait = native.acquire_wait_async(self._handle, request, wait_us, queue_of(loop), fut)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            native.rl_wait_cancel(wait)  # librl ends it and refunds an admission, once
            raise

    async def _call(self, op: int, key: Key, cost: int, timeout: Optional[float]) -> Optional[Decision]:
        request = (key, cost, 0 if timeout is None else _timeout_us(timeout))
        if self._inline:
            if op == _OP_ACQUIRE:
                return native.rl_limiter_acquire(self._handle, request)
            if op == _OP_PEEK:
                return native.rl_limiter_peek(self._handle, request)
            if op == _OP_REFUND:
                return native.rl_limiter_refund(self._handle, request)
            native.rl_limiter_reset(self._handle, key)
            return None
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[Decision]" = loop.create_future()
        _native.call_async(self._handle, op, request, queue_of(loop), fut)
        return await fut

    def _acquire_started(self, key: Key, cost: int) -> "Union[Decision, asyncio.Future[Decision]]":
        """aacquire(key, cost) up to its await, for rl's integrations (one
        coroutine fewer per request): the decision itself on an inline
        store, else the future rl's thread settles. Raises RateLimitError as
        aacquire does."""
        if self._inline:
            decision: Decision = _native.rl_limiter_acquire(self._handle, (key, cost, 0))
            return decision
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[Decision]" = loop.create_future()
        _native.call_async(self._handle, _OP_ACQUIRE, (key, cost, 0), queue_of(loop), fut)
        return fut

    @staticmethod
    def _batch(requests: Iterable[BatchItem], timeout: Optional[float]) -> "list[Tuple[Any, Any, int]]":
        if isinstance(requests, (str, bytes)):
            raise TypeError("requests: must be an iterable of keys or (key, cost) pairs, not one key")
        timeout_us = _timeout_us(timeout)
        batch = []
        for item in requests:
            if isinstance(item, tuple):
                if len(item) != 2:
                    raise TypeError("requests: each item must be a key or a (key, cost) pair")
                batch.append((item[0], item[1], timeout_us))
            else:
                batch.append((item, 1, timeout_us))
        return batch
