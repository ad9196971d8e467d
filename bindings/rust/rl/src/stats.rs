//! What a store has done since it opened (rl_store_get_stats) and its
//! circuit breakers, one per node (rl_store_get_node_breakers). Both read
//! counters the store keeps in memory: no I/O, so each is one plain call,
//! fine from async code and from threads alike (no `async fn` needed).
use std::fmt;
use std::time::Duration;

use rl_sys as sys;

use crate::decision::{micros, Source};
use crate::error::{check, static_str, Result};
use crate::store::Store;

/// The state of a circuit breaker (docs/failure.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Calls go to the store.
    Closed,
    /// Calls take the limiter's `on_failure` at once.
    Open,
    /// One probe is in flight.
    HalfOpen,
    /// A state this crate does not know yet (a newer librl).
    Other(i32),
}

impl BreakerState {
    fn from_raw(v: i32) -> BreakerState {
        match v {
            sys::RL_BREAKER_CLOSED => BreakerState::Closed,
            sys::RL_BREAKER_OPEN => BreakerState::Open,
            sys::RL_BREAKER_HALF_OPEN => BreakerState::HalfOpen,
            other => BreakerState::Other(other),
        }
    }

    /// The rl_breaker_state value.
    pub fn raw(self) -> i32 {
        match self {
            BreakerState::Closed => sys::RL_BREAKER_CLOSED,
            BreakerState::Open => sys::RL_BREAKER_OPEN,
            BreakerState::HalfOpen => sys::RL_BREAKER_HALF_OPEN,
            BreakerState::Other(v) => v,
        }
    }
}

/// The core's name ("closed", "open", "half_open"; rl_breaker_state_name),
/// or "state_N" for a value this librl does not know.
impl fmt::Display for BreakerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match static_str(unsafe { sys::rl_breaker_state_name(self.raw()) }) {
            Some(name) => f.write_str(name),
            None => write!(f, "state_{}", self.raw()),
        }
    }
}

/// Decisions of one source, by verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdicts {
    pub allowed: u64,
    pub denied: u64,
}

/// What a store has done since it opened ([`Store::stats`]). Counters never
/// go down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreStats {
    /// The worst of the nodes' breakers; always `Closed` for memory://.
    pub breaker: BreakerState,
    /// Times the breaker opened.
    pub breaker_opened: u64,
    decisions: [Verdicts; 4],
    /// Calls that ended in an error, indexed by their status
    /// ([`Error::status`](crate::Error::status)); index 0 (success) is 0.
    pub failures: [u64; 16],
    /// Store round trips (none for memory://).
    pub round_trips: u64,
    /// Round-trip latency quantiles: the upper bound of a log-linear
    /// bucket, within 12.5%.
    pub round_trip_p50: Duration,
    pub round_trip_p95: Duration,
    pub round_trip_p99: Duration,
    pub round_trip_max: Duration,
    /// Leases of every limiter of the store (`lease=auto`).
    pub leases: LeaseStats,
}

/// What the leases of a store's limiters did (docs/algorithms.md, "Leases").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseStats {
    /// Slices the store granted.
    pub taken: u64,
    /// Units in them.
    pub units_leased: u64,
    /// Units left in slices when their lease ended.
    pub units_unused: u64,
    /// Of those, units handed back to the store.
    pub units_returned: u64,
    /// Calls decided from a slice with no store call (also counted in
    /// `decisions(Source::Store).allowed`).
    pub decisions: u64,
}

impl StoreStats {
    /// The decisions that `source` made: `decisions(Source::FailOpen).allowed`
    /// counts the calls that failed open. Zero for a source rl does not count.
    pub fn decisions(&self, source: Source) -> Verdicts {
        usize::try_from(source.raw()).ok().and_then(|i| self.decisions.get(i).copied()).unwrap_or_default()
    }

    /// Every source's decisions added up.
    pub fn total(&self) -> Verdicts {
        self.decisions
            .iter()
            .fold(Verdicts::default(), |t, v| Verdicts { allowed: t.allowed + v.allowed, denied: t.denied + v.denied })
    }

    /// True while the breaker is closed.
    pub fn healthy(&self) -> bool {
        self.breaker == BreakerState::Closed
    }
}

/// One node's circuit breaker ([`Store::node_breakers`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeBreaker {
    /// "host:port" (under Sentinel, the master's name).
    pub node: String,
    pub state: BreakerState,
    /// Times it opened.
    pub opened: u64,
}

fn empty_node_breaker() -> sys::rl_node_breaker {
    sys::rl_node_breaker { version: sys::RL_NODE_BREAKER_VERSION, state: 0, opened: 0, node: [0; 272] }
}

impl Store {
    /// The store's statistics (rl_store_get_stats). Works after close.
    pub fn stats(&self) -> Result<StoreStats> {
        // SAFETY: rl_store_stats is plain data; rl_store_stats_init sets it up.
        let mut raw: sys::rl_store_stats = unsafe { std::mem::zeroed() };
        check(|err| unsafe { sys::rl_store_stats_init(&mut raw, sys::RL_STORE_STATS_VERSION, err) })?;
        check(|err| unsafe { sys::rl_store_get_stats(self.inner.ptr, &mut raw, err) })?;
        let mut decisions = [Verdicts::default(); 4];
        for (i, v) in decisions.iter_mut().enumerate() {
            *v = Verdicts { allowed: raw.allowed[i], denied: raw.denied[i] };
        }
        Ok(StoreStats {
            breaker: BreakerState::from_raw(raw.breaker_state),
            breaker_opened: raw.breaker_opened,
            decisions,
            failures: raw.failures,
            round_trips: raw.round_trips,
            round_trip_p50: micros(raw.round_trip_p50_us),
            round_trip_p95: micros(raw.round_trip_p95_us),
            round_trip_p99: micros(raw.round_trip_p99_us),
            round_trip_max: micros(raw.round_trip_max_us),
            leases: LeaseStats {
                taken: raw.leases_taken,
                units_leased: raw.lease_units_leased,
                units_unused: raw.lease_units_unused,
                units_returned: raw.lease_units_returned,
                decisions: raw.lease_decisions,
            },
        })
    }

    /// The breakers of the nodes that serve keys now: one for redis:// and
    /// Sentinel's master, one per master on Cluster, none for memory://.
    /// Works after close.
    pub fn node_breakers(&self) -> Result<Vec<NodeBreaker>> {
        let mut out = vec![empty_node_breaker(); 1];
        loop {
            let mut count = 0usize;
            check(|err| unsafe {
                sys::rl_store_get_node_breakers(self.inner.ptr, out.as_mut_ptr(), out.len(), &mut count, err)
            })?;
            if count <= out.len() {
                out.truncate(count);
                break;
            }
            // More nodes than room (Cluster): again with room for all.
            out = vec![empty_node_breaker(); count];
        }
        Ok(out
            .iter()
            .map(|b| {
                let bytes: Vec<u8> = b.node.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
                NodeBreaker {
                    node: String::from_utf8_lossy(&bytes).into_owned(),
                    state: BreakerState::from_raw(b.state),
                    opened: b.opened,
                }
            })
            .collect())
    }
}
