"""The redis-py sorted-set sliding window, moved onto rl:

    from rl.compat import is_allowed
    if is_allowed("user123", limit=100, window=60): ...

is_allowed(user_id, limit, window) admits at most `limit` calls per user in
any `window` seconds (an exact sliding window, rl's sliding_log), in Redis
when configured with configure("redis://...") or the RL_URL environment
variable, else in this process (memory://). Unlike the sorted-set version,
a denied call is not counted, so a client that keeps retrying while denied
is admitted again as soon as the window allows.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Optional

from . import store as _store
from ._rate import limit_string
from .limiter import Limiter

_lock = threading.Lock()
_state: "dict[str, Any]" = {"store": None, "limiters": {}}


def configure(url: Optional[str] = None, **settings: Any) -> None:
    """Where is_allowed counts: a store URL (default: $RL_URL, else memory://)
    and rl store settings. Closes the store used before."""
    with _lock:
        old = _state["store"]
        _state["store"] = _store.open(url or os.environ.get("RL_URL") or "memory://", **settings)
        _state["limiters"] = {}
    if old is not None:
        old.close()


def _limiter(limit: int, window: float) -> Limiter:
    spec = limit_string("limit", limit, window)
    with _lock:
        found: Optional[Limiter] = _state["limiters"].get(spec)
        if found is None:
            if _state["store"] is None:
                _state["store"] = _store.open(os.environ.get("RL_URL") or "memory://")
            found = _state["store"].limiter(algorithm="sliding_log", limit=spec, name="rate")
            _state["limiters"][spec] = found
        return found


def is_allowed(user_id: str, limit: int = 100, window: float = 60) -> bool:
    """True when user_id may make one more call: fewer than `limit` were
    admitted in the last `window` seconds. The call is counted when admitted."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit: must be int, not {type(limit).__name__}")
    if not isinstance(user_id, (str, bytes)):
        raise TypeError(f"user_id: must be str or bytes, not {type(user_id).__name__}")
    return _limiter(limit, window).acquire(user_id).allowed


async def ais_allowed(user_id: str, limit: int = 100, window: float = 60) -> bool:
    """is_allowed without blocking the event loop."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit: must be int, not {type(limit).__name__}")
    if not isinstance(user_id, (str, bytes)):
        raise TypeError(f"user_id: must be str or bytes, not {type(user_id).__name__}")
    return (await _limiter(limit, window).aacquire(user_id)).allowed
