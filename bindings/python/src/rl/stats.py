"""What a store has done since it opened (rl_store_get_stats), named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Tuple

from .decision import Source
from . import native
from .errors import STATUS_NAMES


@dataclass(frozen=True, slots=True)
class Verdicts:
    allowed: int
    denied: int


@dataclass(frozen=True, slots=True)
class RoundTrips:
    """Store round trips (none for memory://); latencies in seconds, each the
    upper bound of a log-linear bucket (within 12.5%)."""

    count: int
    p50: float
    p95: float
    p99: float
    max: float


@dataclass(frozen=True, slots=True)
class StoreStats:
    healthy: bool  # the circuit breaker is closed (always for memory://)
    breaker: str  # "closed", "open" or "half_open"
    breaker_opened: int  # times the breaker opened
    decisions: Dict[Source, Verdicts]
    failures: Dict[str, int]  # calls that failed, by status name
    round_trips: RoundTrips


def from_native(raw: Tuple[Any, ...]) -> StoreStats:
    state, opened, allowed, denied, failures, trips, quantiles = raw
    return StoreStats(
        healthy=state == 0,
        breaker=native.rl_breaker_state_name(state) or f"state_{state}",
        breaker_opened=opened,
        decisions={source: Verdicts(allowed[i], denied[i]) for i, source in enumerate(Source)},
        failures={name: failures[code] for code, name in STATUS_NAMES.items() if code != 0},
        round_trips=RoundTrips(trips, *(us / 1_000_000 for us in quantiles)),
    )
