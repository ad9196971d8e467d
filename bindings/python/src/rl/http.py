"""One rate-limited HTTP request, whatever the framework: what the ASGI
middleware (rl.asgi), the FastAPI dependency (rl.fastapi) and the Django
middleware (rl.django) all answer by. The header fields are librl's
(rl_headers_render, docs/http-headers.md): the Node, Go and Java bindings
send the same bytes for the same decision.

    outcome = await adecide(limiter, key, cost)   # or decide(...) in sync code
    outcome.kind: "allowed" | "denied"  -> outcome.headers to set; 429 when denied
                  "outage"              -> 503 (a store outage under on_failure="closed")
                  "error"               -> outcome.error to the framework's error path

The asyncio integrations take the same steps without an Outcome per request:
Limiter._acquire_started, is_outage for a failure, and fields_of(limiter)
(Fields) for the fields in the form their framework sends.
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
    return fields_of(limiter).as_dict(decision)


_names: tuple[Optional[str], ...] = ()


def _header_names(count: int) -> tuple[Optional[str], ...]:
    """rl_header_name by rl_header, fetched once (a native call per field and
    request otherwise)."""
    global _names
    if len(_names) != count:
        _names = tuple(native.rl_header_name(index) for index in range(count))
    return _names


_SOURCE_INDEX = {source: index for index, source in enumerate(_SOURCES)}


class Fields:
    """One limiter's header fields, rendered by librl (rl_headers_render) for
    each decision: what does not change per request (the limiter's name and
    limits, the field names in each form the integrations send) is looked
    up once, in fields_of(limiter)."""

    __slots__ = ("_name", "_limits", "_names", "_lower", "_lower_bytes")

    def __init__(self, limiter: Limiter) -> None:
        self._name = limiter.name
        self._limits = limiter._limit_infos
        self._names = _header_names(native.RL_HEADER_COUNT)
        self._lower = tuple(name.lower() if name else None for name in self._names)
        self._lower_bytes = tuple(name.encode() if name else None for name in self._lower)

    def values(self, decision: Decision) -> list[Optional[str]]:
        """The fields' values by rl_header, None where one is not sent.
        Raises RateLimitError as rl_headers_render does."""
        retry_after = decision.retry_after
        values: list[Optional[str]] = _render(
            self._name,
            self._limits,
            (
                decision.allowed,
                decision.remaining,
                -1 if retry_after < 0 else round(retry_after * 1_000_000),
                round(decision.reset_after * 1_000_000),
                decision.limit_index,
                _SOURCE_INDEX[decision.source],
            ),
        )
        return values

    def as_dict(self, decision: Decision) -> dict[str, str]:
        """{field name: value} of the fields sent."""
        return self.named(self.values(decision))

    def named(self, values: list[Optional[str]]) -> dict[str, str]:
        """{field name: value} of the fields sent, from values()."""
        return {n: v for n, v in zip(self._names, values) if v is not None and n is not None}

    def as_pairs(self, values: list[Optional[str]]) -> list[tuple[str, str]]:
        """(lowercase name, value) of the fields sent: gRPC metadata."""
        return [(n, v) for n, v in zip(self._lower, values) if v is not None and n is not None]

    def as_raw(self, values: list[Optional[str]]) -> list[tuple[bytes, bytes]]:
        """(lowercase name, value) as bytes, of the fields sent: ASGI's headers."""
        return [(n, v.encode()) for n, v in zip(self._lower_bytes, values) if v is not None and n is not None]


# SWIG's function itself: native.py's wrapper would add a frame per request.
_render = native._native.rl_headers_render


def fields_of(limiter: Limiter) -> Fields:
    """The limiter's Fields, made on first use."""
    fields: Optional[Fields] = limiter.__dict__.get("_fields")
    if fields is None:
        fields = limiter.__dict__["_fields"] = Fields(limiter)
    return fields


def failure(error: RateLimitError) -> "Outcome":
    """The outcome of an acquire that raised: an outage or an error."""
    return Outcome("outage") if is_outage(error) else Outcome("error", error=error)


@dataclass
class Outcome:
    kind: str  # "allowed", "denied", "outage", "error"
    decision: Optional[Decision] = None
    headers: dict[str, str] = field(default_factory=dict)
    error: Optional[BaseException] = None


def is_outage(error: BaseException) -> bool:
    """A store outage (rl_status_is_outage): 503 / UNAVAILABLE, not an error."""
    return isinstance(error, RateLimitError) and bool(native.rl_status_is_outage(error.code))


def outcome_of(limiter: Limiter, decision: Decision) -> Outcome:
    """A decision's outcome: allowed or denied with its fields (an error
    where they cannot be rendered)."""
    try:
        headers = fields_of(limiter).as_dict(decision)
    except RateLimitError as e:
        return Outcome("error", decision, error=e)
    return Outcome("allowed" if decision.allowed else "denied", decision, headers)


def decide(limiter: Limiter, key: Union[str, bytes], cost: int = 1) -> Outcome:
    """One request's outcome, deciding on this thread (sync frameworks)."""
    try:
        decision = limiter.acquire(key, cost)
    except RateLimitError as e:
        return failure(e)
    return outcome_of(limiter, decision)


async def adecide(limiter: Limiter, key: Union[str, bytes], cost: int = 1) -> Outcome:
    """One request's outcome, without blocking the event loop. (rl's own
    integrations inline this: limiter._acquire_started and Fields, one
    coroutine and no Outcome per request.)"""
    try:
        decision = await limiter.aacquire(key, cost)
    except RateLimitError as e:
        return failure(e)
    return outcome_of(limiter, decision)


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
