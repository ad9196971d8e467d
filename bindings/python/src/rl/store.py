"""Stores: where limiter state lives (memory:// or redis://)."""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any, NamedTuple, Optional

from . import native
from ._text import c_text, setting_text
from .errors import InvalidArgumentError
from .limiter import Limiter, make_config
from .stats import StoreStats
from .stats import of_store as _stats


class DecidesWith(NamedTuple):
    """What decides in Redis for a store (script_mode; docs/redis-module.md)."""

    script_mode: str  # the setting: "auto", "module", "functions" or "scripts"
    lua_mode: str  # what the Lua code goes as: "functions", or "scripts" without Functions
    module_nodes: int  # script_mode=auto only: nodes seen deciding with rl's Redis module
    lua_nodes: int  # script_mode=auto only: nodes seen deciding with the Lua code


class Store:
    """An open store. Use it as a context manager (``with rl.open(url) as
    store:``, or ``async with``), or call close(). A store that is never
    closed is closed when it is garbage-collected, and at interpreter exit
    (calls in flight then end with ShutdownError)."""

    def __init__(self, handle: Any, inline: bool) -> None:
        self._handle = handle
        self._closed = False
        #: The URL it was opened with in librl's display form
        #: (rl_store_display_url): the password and every secret setting
        #: (sentinel_password) replaced by ``***``.
        self.url: str = native.rl_store_display_url(handle)
        info = _describe(handle)
        #: True for a store whose state lives in this process (memory://).
        self.in_process: bool = bool(info.in_process)
        #: True when opened with clock=manual (time moves only by clock_set/clock_advance).
        self.manual_clock: bool = bool(info.manual_clock)
        #: "memory" or "redis".
        self.scheme: str = info.scheme or ""
        # librl says whether the store waits for I/O (in_process: memory://);
        # one that never does answers its async calls on the caller's thread.
        self._inline = inline and self.in_process
        self._finalizer = weakref.finalize(self, native.store_free, handle)
        self._limiters: "weakref.WeakSet[Limiter]" = weakref.WeakSet()
        _live_stores.add(self)

    def __repr__(self) -> str:
        return f"<rl.Store {self.url}{' closed' if self._closed else ''}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def limiter(
        self,
        *,
        limit: str | list[str] | tuple[str, ...] | None = None,
        algorithm: Optional[str] = None,
        burst: int | str | list[int] | tuple[int, ...] | None = None,
        name: Optional[str] = None,
        granularity: Optional[str] = None,
        on_failure: Optional[str] = None,
        local_share: str | float | None = None,
        **settings: Any,
    ) -> Limiter:
        """A limiter over this store. Settings are librl's (rl.setting_infos()
        describes each): ``limit="100/1m"`` or ``["10/s", "1000/h"]``;
        ``algorithm="gcra"`` (default), ``token_bucket``, ``sliding_log``,
        ``sliding_window``, ``fixed_window`` or ``suppressed``; ``burst`` one
        per limit; ``name`` the keys' namespace; ``granularity`` the sub-window
        of sliding_window and suppressed; suppressed's ``hard_limit_factor``,
        ``factor_reuse`` and ``seed``; ``on_failure="closed" | "open" |
        "local"`` with ``local_share``; ``deny_cache_keys`` the denied-key
        cache; ``lease="auto"`` with ``lease_ms``, ``lease_threshold`` and
        ``lease_share`` (leases: fixed_window, sliding_window, sliding_log, gcra and token_bucket). A bad value or a missing limit raises InvalidArgumentError
        naming it."""
        named = {
            "algorithm": algorithm,
            "limit": limit,
            "burst": burst,
            "name": name,
            "granularity": granularity,
            "on_failure": on_failure,
            "local_share": local_share,
        }
        named.update(settings)
        given = {k: setting_text(k, v) for k, v in named.items() if v is not None}
        cfg = make_config(given)
        try:
            handle = native.rl_limiter_new(self._handle, cfg)
        finally:
            native.rl_config_free(cfg)
        limiter = Limiter(self, handle, given, self._inline)
        self._limiters.add(limiter)
        return limiter

    # -- manual clock (tests) --
    def clock_set(self, now_us: int) -> None:
        """Sets a clock=manual store's time to now_us microseconds (never backwards)."""
        native.rl_store_clock_set(self._handle, now_us)

    def clock_advance(self, delta_us: int) -> None:
        """Moves a clock=manual store's time forward by delta_us microseconds."""
        native.rl_store_clock_advance(self._handle, delta_us)

    # -- health and metrics --
    def stats(self) -> StoreStats:
        """What the store has done since it opened; works after close()."""
        return _stats(self._handle)

    def is_healthy(self) -> bool:
        """True while the circuit breaker is closed (always for memory://)."""
        return self.stats().healthy

    def decides_with(self) -> Optional[DecidesWith]:
        """What decides in Redis now (rl_store_describe; works after close()):
        the script_mode setting, what the Lua code goes as, and under
        script_mode=auto the nodes seen deciding with rl's Redis module and
        with the Lua code, which grow as calls reach them. None for memory://."""
        info = _describe(self._handle)
        if info.script_mode is None:  # memory://
            return None
        return DecidesWith(info.script_mode, info.lua_mode or "", info.module_nodes, info.lua_nodes)

    def metrics(self) -> str:
        """The statistics in the Prometheus text format (version 0.0.4)."""
        text = native.rl_store_metrics(self._handle)
        if text is None:
            raise MemoryError("rl_store_metrics")
        return text

    # -- lifetime --
    def close(self) -> None:
        """Closes the store: calls in flight end with ShutdownError, and so does
        every later call on its limiters. Idempotent."""
        if not self._closed:
            self._closed = True
            native.rl_store_close(self._handle)

    def _forked(self, closed_store: Any, closed_limiter: Any) -> None:
        """In a child process after fork: the parent's store is not ours to
        use (its I/O thread did not come along, its Redis connection is the
        parent's) nor to free (that would wait for that thread). It stays
        allocated, and this object and its limiters answer ShutdownError."""
        self._finalizer.detach()
        self._handle = closed_store
        self._closed = True
        for limiter in list(self._limiters):
            limiter._forked(closed_limiter)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Store":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()


def _describe(handle: Any) -> Any:
    info = native.rl_store_info()
    native.rl_store_info_init(info, native.RL_STORE_INFO_VERSION)
    native.rl_store_describe(handle, info)
    return info


_live_stores: "weakref.WeakSet[Store]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    stores = list(_live_stores)
    if not stores:
        return
    # One closed memory:// store and a limiter of it stand in for every
    # inherited handle: each call then fails with RL_E_SHUTDOWN.
    closed_store = native.rl_store_open("memory://", None)
    native.rl_store_close(closed_store)
    cfg = make_config({"limit": "1/s"})
    try:
        closed_limiter = native.rl_limiter_new(closed_store, cfg)
    finally:
        native.rl_config_free(cfg)
    for store in stores:
        store._forked(closed_store, closed_limiter)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _open_handle(url: str, settings: dict[str, Any]) -> Any:
    c_text("url", url)
    given = {k: setting_text(k, v) for k, v in settings.items() if v is not None}
    cfg = make_config(given) if given else None
    try:
        return native.rl_store_open(url, cfg)
    finally:
        if cfg is not None:
            native.rl_config_free(cfg)


def open(url: str, *, inline: bool = True, **settings: Any) -> Store:  # noqa: A001 (rl.open, like io.open)
    """Opens a store: ``memory://`` or ``redis://[user:pass@]host:port[/db]``,
    with store settings as query parameters or keywords (``timeout_ms=50,
    prefix="rl", clock="manual"``). Connecting to Redis releases the GIL.

    inline (default True): the async methods of a memory:// store answer on
    the caller's thread, which they can do without waiting; False sends
    them through rl's I/O thread like Redis calls.
    """
    if not isinstance(inline, bool):
        raise TypeError("inline: must be bool")
    return Store(_open_handle(url, settings), inline)


async def aopen(url: str, *, inline: bool = True, **settings: Any) -> Store:
    """open() without blocking the event loop (the connection is made on a
    worker thread)."""
    if not isinstance(inline, bool):
        raise TypeError("inline: must be bool")
    handle = await asyncio.get_running_loop().run_in_executor(None, _open_handle, url, settings)
    return Store(handle, inline)


def settings() -> dict[str, str]:
    """Every setting librl knows, name to description (rl_config_describe)."""
    out: dict[str, str] = {}
    index = 0
    while (setting := native.rl_config_describe(index)) is not None:
        out[setting[0]] = setting[1]
        index += 1
    return out


class SettingInfo(NamedTuple):
    """One setting of librl's settings table (rl_setting_describe)."""

    name: str
    scope: str  # "store" (a URL query key) or "limiter" (Store.limiter)
    kind: str  # "count", "duration", "choice", "boolean", "rates", "text", ...
    choices: tuple[str, ...]  # kind "choice": its words
    default: Optional[str]  # None: no default a value spells
    description: str
    range: Optional[tuple[int, int]]  # kind "count": the whole numbers it takes
    secret: bool  # a credential: never shown


def setting_infos() -> list[SettingInfo]:
    """Every setting librl knows, described field by field, in its table's order."""
    out: list[SettingInfo] = []
    while True:
        info = native.rl_setting_info()
        native.rl_setting_info_init(info, native.RL_SETTING_INFO_VERSION)
        try:
            native.rl_setting_describe(len(out), info)
        except InvalidArgumentError:  # past the last setting
            return out
        out.append(
            SettingInfo(
                name=info.name,
                scope=info.scope,
                kind=info.kind,
                choices=tuple(info.choices.split(",")) if info.choices else (),
                default=info.default_value,
                description=info.description,
                range=(info.range_min, info.range_max) if info.kind == "count" else None,
                secret=bool(info.secret),
            )
        )


__all__ = ["Store", "open", "aopen", "settings", "setting_infos", "SettingInfo"]
