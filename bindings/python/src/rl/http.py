"""One rate-limited HTTP request, whatever the framework: what the ASGI
middleware (rl.asgi), the FastAPI dependency (rl.fastapi) and the Django
middleware (rl.django) all answer by. The header fields are librl's
(rl_headers_render, docs/http-headers.md): the Node, Go and Java bindings
send the same bytes for the same decision.

    outcome = await adecide(limiter, key, cost)   # or decide(...) in sync code
    outcome.kind: "allowed" | "denied"  -> outcome.headers to set; 429 when denied
                  "outage"              -> 503 (a store outage under on_failure="closed")
                  "error"               -> outcome.error to the framework's error path
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional, Union

from . import native
from .decision import _SOURCES, Decision
from .errors import RateLimitError
from .limiter import Limiter

TOO_MANY_REQUESTS = "Too Many Requests\n"
STORE_UNREACHABLE = "Service Unavailable: rate limiter store unreachable\n"


def header_fields(limiter: Limiter, decision: Decision) -> dict[str, str]:
    """The RateLimit-Policy, RateLimit and Retry-After fields of a decision
    (none of a fail-open one, which counted nothing)."""
    values = native.rl_headers_render(
        limiter.name,
        limiter._limit_infos,
        (
            1 if decision.allowed else 0,
            decision.remaining,
            -1 if decision.retry_after < 0 else round(decision.retry_after * 1_000_000),
            round(decision.reset_after * 1_000_000),
            decision.limit_index,
            _SOURCES.index(decision.source),
        ),
    )
    names = _header_names(len(values))
    out: dict[str, str] = {}
    for name, value in zip(names, values):
        if value is not None and name is not None:
            out[name] = value
    return out


_names: tuple[Optional[str], ...] = ()


def _header_names(count: int) -> tuple[Optional[str], ...]:
    """rl_header_name by rl_header, fetched once (a native call per field and
    request otherwise)."""
    global _names
    if len(_names) != count:
        _names = tuple(native.rl_header_name(index) for index in range(count))
    return _names


@dataclass
class Outcome:
    kind: str  # "allowed", "denied", "outage", "error"
    decision: Optional[Decision] = None
    headers: dict[str, str] = field(default_factory=dict)
    error: Optional[BaseException] = None


def _is_outage(error: BaseException) -> bool:
    return isinstance(error, RateLimitError) and bool(native.rl_status_is_outage(error.code))


def _outcome(limiter: Limiter, decision: Decision) -> Outcome:
    try:
        headers = header_fields(limiter, decision)
    except RateLimitError as e:
        return Outcome("error", decision, error=e)
    return Outcome("allowed" if decision.allowed else "denied", decision, headers)


def decide(limiter: Limiter, key: Union[str, bytes], cost: int = 1) -> Outcome:
    """One request's outcome, deciding on this thread (sync frameworks)."""
    try:
        decision = limiter.acquire(key, cost)
    except RateLimitError as e:
        return Outcome("outage") if _is_outage(e) else Outcome("error", error=e)
    return _outcome(limiter, decision)


async def adecide(limiter: Limiter, key: Union[str, bytes], cost: int = 1) -> Outcome:
    """One request's outcome, without blocking the event loop."""
    try:
        decision = await limiter.aacquire(key, cost)
    except RateLimitError as e:
        return Outcome("outage") if _is_outage(e) else Outcome("error", error=e)
    return _outcome(limiter, decision)


KeyFunc = Callable[[Any], Union[str, bytes, Awaitable[Union[str, bytes]]]]
CostFunc = Callable[[Any], Union[int, Awaitable[int]]]


def check_options(what: str, limiter: Any, key: Any, cost: Any) -> None:
    """The options every integration takes, checked at setup so that a bad one
    fails at startup, naming it."""
    if not isinstance(limiter, Limiter):
        raise TypeError(f"{what}: limiter: must be an rl.Limiter (store.limiter(...))")
    if key is not None and not callable(key):
        raise TypeError(f"{what}: key: must be a function of the request")
    if cost is not None and not callable(cost):
        raise TypeError(f"{what}: cost: must be a function of the request")
