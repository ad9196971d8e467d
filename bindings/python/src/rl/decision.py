"""What a limiter answers: Decision, and the limits it was built with.

Durations are float seconds (like time.sleep, asyncio.sleep and
time.monotonic); librl counts microseconds, so they are exact to 1 us.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from . import native


class Source(str, enum.Enum):
    """Which path produced a decision (rl_source; values named by rl_source_name)."""

    STORE = "store"  # the store itself decided
    FAIL_OPEN = "fail_open"  # an outage; on_failure="open" allowed it
    LOCAL = "local"  # an outage; the in-process fallback (on_failure="local") decided
    DENY_CACHE = "deny_cache"  # a denial the limiter remembered (deny_cache_keys)

    def __str__(self) -> str:
        return self.value


def _sources() -> tuple[Source, ...]:
    """Every rl_source of the loaded librl, in value order, checked by name."""
    out: list[Source] = []
    while (name := native.rl_source_name(len(out))) is not None:
        out.append(Source(name))  # a ValueError here: librl has a source this package lacks
    return tuple(out)


_SOURCES = _sources()


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision. Being denied is a decision, not an exception.

    allowed: the request was admitted and its cost recorded.
    limit: the limit (units per window) that decided.
    remaining: units one more request could take now (never negative).
    retry_after: seconds until the same request would be admitted; 0.0 when
        allowed; -1.0 when it never can be (its cost is above the burst).
    reset_after: seconds until the key is back to full capacity.
    limit_index: which limit decided, an index into Limiter.limits.
    source: who decided (Source.STORE unless the store had an outage or
        the limiter's denied-key cache answered).
    suppression_factor: algorithm "suppressed": the share of calls it
        suppressed when this one was decided (0.0 below the limit, 1.0 above
        the hard limit; in between this call was admitted with probability
        1 - suppression_factor); 0.0 for every other algorithm.
    """

    allowed: bool
    limit: int
    remaining: int
    retry_after: float
    reset_after: float
    limit_index: int = 0
    source: Source = Source.STORE
    suppression_factor: float = 0.0

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def retry_after_us(self) -> int:
        """retry_after in librl's microseconds (-1: never)."""
        return round(self.retry_after * 1_000_000)

    @property
    def reset_after_us(self) -> int:
        """reset_after in librl's microseconds."""
        return round(self.reset_after * 1_000_000)


# The native layer builds every Decision itself (its __init__ costs more than
# librl's decision on memory://): it needs the slots in this order.
native.set_decision_type(
    Decision,
    ("allowed", "limit", "remaining", "retry_after", "reset_after", "limit_index", "source", "suppression_factor"),
    _SOURCES,
)


@dataclass(frozen=True, slots=True)
class Limit:
    """One limit of a limiter as librl parsed it: `limit` units per `window`
    seconds, capacity `burst`."""

    limit: int
    window: float
    burst: int
