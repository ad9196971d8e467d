"""rl: a distributed rate limiter (memory:// and Redis), over librl's C ABI.

    import rl

    with rl.open("redis://127.0.0.1:6379") as store:          # or "memory://"
        limiter = store.limiter(algorithm="gcra", limit="100/1m", burst=20, name="api")
        decision = limiter.acquire("user:42")                  # or: await limiter.aacquire(...)
        if not decision.allowed:
            print(f"retry in {decision.retry_after:.3f} s")

See bindings/python/README.md for the whole API.
"""

from . import native
from .decision import Decision, Limit, Source
from .errors import (
    STATUS_NAMES,
    AuthError,
    BackendError,
    BackendUnavailableError,
    InternalError,
    InvalidArgumentError,
    OutOfMemoryError,
    RateLimitError,
    ShutdownError,
    StoreTimeoutError,
    UnsupportedError,
)
from .limiter import Limiter
from .stats import Leases, RoundTrips, StoreStats, Verdicts
from .store import DecidesWith, SettingInfo, Store, aopen, open, setting_infos, settings

#: Longest key in bytes.
MAX_KEY_LENGTH: int = native.RL_MAX_KEY_LEN
#: Most requests in one batch.
MAX_BATCH: int = native.RL_MAX_BATCH
#: Version of the librl loaded at run time.
LIBRARY_VERSION: str = native.rl_version()
__version__ = "1.1.0"

__all__ = [
    "open",
    "aopen",
    "settings",
    "setting_infos",
    "SettingInfo",
    "Store",
    "DecidesWith",
    "Limiter",
    "Decision",
    "Limit",
    "Source",
    "StoreStats",
    "Verdicts",
    "RoundTrips",
    "Leases",
    "RateLimitError",
    "InvalidArgumentError",
    "StoreTimeoutError",
    "BackendUnavailableError",
    "BackendError",
    "ShutdownError",
    "OutOfMemoryError",
    "InternalError",
    "AuthError",
    "UnsupportedError",
    "STATUS_NAMES",
    "MAX_KEY_LENGTH",
    "MAX_BATCH",
    "LIBRARY_VERSION",
]
