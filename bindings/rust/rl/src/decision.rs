//! What a call decided: rl_decision with every field of its version 3.
use std::fmt;
use std::time::Duration;

use rl_sys as sys;

use crate::error::static_str;

/// Which path produced a decision (rl_source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The store itself decided.
    Store,
    /// The store had an outage; `on_failure = open` admitted it, uncounted.
    FailOpen,
    /// The store had an outage; the local fallback (`on_failure = local`) decided.
    Local,
    /// A denial the limiter remembered (`deny_cache_keys`): no store call.
    DenyCache,
    /// A source this crate does not know yet (a newer librl).
    Other(i32),
}

impl Source {
    pub(crate) fn from_raw(v: i32) -> Source {
        match v {
            sys::RL_SOURCE_STORE => Source::Store,
            sys::RL_SOURCE_FAIL_OPEN => Source::FailOpen,
            sys::RL_SOURCE_LOCAL => Source::Local,
            sys::RL_SOURCE_DENY_CACHE => Source::DenyCache,
            other => Source::Other(other),
        }
    }

    /// The rl_source value.
    pub fn raw(self) -> i32 {
        match self {
            Source::Store => sys::RL_SOURCE_STORE,
            Source::FailOpen => sys::RL_SOURCE_FAIL_OPEN,
            Source::Local => sys::RL_SOURCE_LOCAL,
            Source::DenyCache => sys::RL_SOURCE_DENY_CACHE,
            Source::Other(v) => v,
        }
    }

    /// Its name ("store", "fail_open", "local", "deny_cache": rl_source_name).
    pub fn name(self) -> &'static str {
        static_str(unsafe { sys::rl_source_name(self.raw()) }).unwrap_or("unknown")
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One decision. Being denied is a decision (`allowed` false), not an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The request was admitted and its cost recorded.
    pub allowed: bool,
    /// The limit (units per window) that decided.
    pub limit: i64,
    /// Units one more request could take right now (never negative).
    pub remaining: i64,
    /// Zero when allowed; else the time until the same request would be
    /// admitted; `None` when it never can be (its cost is above the burst).
    pub retry_after: Option<Duration>,
    /// Time until the key is back to its full capacity.
    pub reset_after: Duration,
    /// Which path decided.
    pub source: Source,
    /// Which limit decided, 0-based in the order of the `limit` setting.
    pub limit_index: usize,
    /// algorithm = suppressed: the share of calls suppressed when this one
    /// was decided (0 to 1, a multiple of 2^-24); 0 for other algorithms.
    pub suppression_factor: f64,
}

/// rl.h's microseconds as a Duration (a negative count as zero).
pub(crate) fn micros(us: i64) -> Duration {
    Duration::from_micros(us.max(0) as u64)
}

impl Decision {
    pub(crate) fn from_raw(d: &sys::rl_decision) -> Decision {
        Decision {
            allowed: d.allowed != 0,
            limit: d.limit,
            remaining: d.remaining,
            retry_after: if d.retry_after_us < 0 { None } else { Some(micros(d.retry_after_us)) },
            reset_after: micros(d.reset_after_us),
            source: Source::from_raw(d.source),
            limit_index: d.limit_index.max(0) as usize,
            suppression_factor: d.suppression_factor,
        }
    }

    /// retry_after in microseconds as rl.h has it: -1 for "never".
    pub fn retry_after_us(&self) -> i64 {
        self.retry_after.map_or(-1, |d| d.as_micros() as i64)
    }

    /// reset_after in microseconds.
    pub fn reset_after_us(&self) -> i64 {
        self.reset_after.as_micros() as i64
    }

    /// The rl_decision (version 3) of this decision, for rl_headers_render.
    pub(crate) fn to_raw(self) -> sys::rl_decision {
        let mut d = empty_decision();
        d.allowed = self.allowed as i32;
        d.limit = self.limit;
        d.remaining = self.remaining;
        d.retry_after_us = self.retry_after_us();
        d.reset_after_us = self.reset_after_us();
        d.source = self.source.raw();
        d.limit_index = self.limit_index as i32;
        d.suppression_factor = self.suppression_factor;
        d
    }
}

/// An rl_decision of this crate's version (RL_DECISION_INIT).
pub(crate) fn empty_decision() -> sys::rl_decision {
    sys::rl_decision {
        version: sys::RL_DECISION_VERSION,
        allowed: 0,
        limit: 0,
        remaining: 0,
        retry_after_us: 0,
        reset_after_us: 0,
        source: 0,
        limit_index: 0,
        suppression_factor: 0.0,
    }
}
