"""Rates given as numbers (requests per second, windows in seconds) as rl's
limit strings."""

from __future__ import annotations

import math

from .errors import invalid

# librl's longest window: 366 days.
_MAX_WINDOW_US = 366 * 86400 * 1_000_000


def limit_string(what: str, count: float, window_seconds: float) -> str:
    """`count` requests per `window_seconds` as "N/Wus" (N whole). A count
    below 1 becomes 1 request per the longer window it takes."""
    for name, value in ((what, count), ("window", window_seconds)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name}: must be a number, not {type(value).__name__}")
        if not math.isfinite(value) or value <= 0:
            raise invalid(f"{name}: {value!r} must be a positive finite number")
    if count < 1:
        window_seconds /= count
        count = 1
    window_us = round(window_seconds * 1_000_000)
    if not 1 <= window_us <= _MAX_WINDOW_US:
        raise invalid(f"window: {window_seconds!r} s is outside 1 us to 366 days")
    return f"{math.floor(count)}/{window_us}us"


def per_second(requests_per_second: float, window_seconds: float) -> str:
    """requests_per_second counted over windows of window_seconds: N =
    floor(rate * window) requests (at least 1) per N / rate seconds, so that
    the rate is kept when rate * window is not whole."""
    limit_string("requests_per_second", requests_per_second, window_seconds)  # checks both
    count = max(1, math.floor(requests_per_second * window_seconds))
    return limit_string("requests_per_second", count, count / requests_per_second)
