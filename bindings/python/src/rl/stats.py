"""What a store has done since it opened (rl_store_get_stats), named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

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
class Leases:
    """Leases of every limiter of the store (lease="auto", docs/algorithms.md)."""

    taken: int  # slices the store granted
    units_leased: int  # units in them
    units_unused: int  # units left in slices when their lease ended
    units_returned: int  # of those, units handed back to the store
    decisions: int  # calls decided from a slice, with no store call


@dataclass(frozen=True, slots=True)
class StoreStats:
    healthy: bool  # the circuit breaker is closed (always for memory://)
    breaker: str  # "closed", "open" or "half_open"
    breaker_opened: int  # times the breaker opened
    decisions: Dict[Source, Verdicts]
    failures: Dict[str, int]  # calls that failed, by status name
    round_trips: RoundTrips
    leases: Leases


def of_store(handle: Any) -> StoreStats:
    """A store's statistics (rl_store_get_stats)."""
    s = native.rl_store_stats()
    native.rl_store_stats_init(s, native.RL_STORE_STATS_VERSION)
    native.rl_store_get_stats(handle, s)
    state, allowed, denied, failures = s.breaker_state, s.allowed, s.denied, s.failures
    quantiles = (s.round_trip_p50_us, s.round_trip_p95_us, s.round_trip_p99_us, s.round_trip_max_us)
    return StoreStats(
        healthy=state == 0,
        breaker=native.rl_breaker_state_name(state) or f"state_{state}",
        breaker_opened=s.breaker_opened,
        decisions={source: Verdicts(allowed[i], denied[i]) for i, source in enumerate(Source)},
        failures={name: failures[code] for code, name in STATUS_NAMES.items() if code != 0},
        round_trips=RoundTrips(s.round_trips, *(us / 1_000_000 for us in quantiles)),
        leases=Leases(
            s.leases_taken,
            s.lease_units_leased,
            s.lease_units_unused,
            s.lease_units_returned,
            s.lease_decisions,
        ),
    )
