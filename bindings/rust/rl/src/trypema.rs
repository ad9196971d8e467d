//! An API shaped like trypema's Redis provider (its `absolute` and
//! `suppressed` strategies), deciding with rl: a trypema user switches by
//! changing `use trypema::...` to `use rl::trypema::...` and giving the
//! options an rl [`Store`] where trypema took a Redis connection manager.
//!
//! ```no_run
//! use rl::trypema::{
//!     HardLimitFactor, LocalRateLimiterOptions, RateGroupSizeMs, RateLimit, RateLimitDecision, RateLimiter,
//!     RateLimiterOptions, RedisKey, RedisRateLimiterOptions, WindowSizeSeconds,
//! };
//! # async fn run() -> Result<(), rl::trypema::TrypemaError> {
//! let rl = RateLimiter::new(RateLimiterOptions {
//!     local: LocalRateLimiterOptions {
//!         window_size_seconds: WindowSizeSeconds::try_from(60)?,
//!         rate_group_size_ms: RateGroupSizeMs::try_from(10)?,
//!         hard_limit_factor: HardLimitFactor::default(),
//!     },
//!     redis: RedisRateLimiterOptions {
//!         store: rl::Store::open("redis://127.0.0.1:6379")?,
//!         prefix: None,
//!         window_size_seconds: WindowSizeSeconds::try_from(60)?,
//!         rate_group_size_ms: RateGroupSizeMs::try_from(10)?,
//!         hard_limit_factor: HardLimitFactor::default(),
//!     },
//! });
//! let key = RedisKey::try_from("user_123".to_string())?;
//! let rate = RateLimit::try_from(10.0)?;
//! match rl.redis().absolute().inc(&key, &rate, 1).await? {
//!     RateLimitDecision::Allowed => {}
//!     RateLimitDecision::Rejected { retry_after_ms, .. } => { let _ = retry_after_ms; }
//!     _ => unreachable!(),
//! }
//! # Ok(()) }
//! ```
//!
//! What is the same: the types, variants and fields; `RedisKey`'s rules
//! (not empty, at most 255 bytes, no ':') and errors; the window capacity
//! `window_size_seconds × rate_limit` (rounded down); `inc` records only an
//! admission; `is_allowed` records nothing; the suppressed strategy's three
//! answers (below the limit `Allowed`, above `limit × hard_limit_factor`
//! `Rejected`, in between `Suppressed` with the factor and this call's
//! verdict); time is the store's (Redis time on Redis).
//!
//! Where rl's answer differs from trypema's:
//! - **Exact admission.** `absolute` is rl's `sliding_log`: no call is
//!   admitted beyond the capacity in any window, under any concurrency (trypema
//!   calls its own "best-effort"). `suppressed` is rl's `suppressed`
//!   algorithm (docs/algorithms.md), whose hard limit is exact too.
//! - **Exact retry hints.** `retry_after_ms` is rl's own retry_after, the
//!   time after which the same call is admitted (rounded up to a
//!   millisecond), not the age of the oldest bucket; `remaining_after_waiting`
//!   is the `count` asked for, which that wait guarantees.
//! - **rl's windows.** `rate_group_size_ms` is accepted and checked but not
//!   used: rl keeps exact logs (`absolute`) or its own sub-windows
//!   (`suppressed`: `granularity`, default window/1000 or 100 ms).
//! - **Every topology.** The store is any rl URL (Redis, TLS, Sentinel,
//!   Cluster, memory://); an rl key lives in one Cluster slot. The Redis
//!   keys are rl's, named after the limiter `<prefix>_absolute` or
//!   `<prefix>_suppressed` (any rl user, in any language, naming that
//!   limiter shares its limits), not trypema's `<prefix>:<key>:...`.
//! - **Failures** are rl's: an outage is `TrypemaError::Rl` with
//!   [`Error::is_outage`](crate::Error::is_outage).
//! - **is_allowed** needs the key's rate: it is the one of this process's
//!   last `inc` of the key (trypema caches it in Redis); a key this process
//!   never incremented is `Allowed`.
//! - The `local` provider is rl's memory:// store with the same strategies.
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::{Algorithm, Decision, LimiterConfig, Store};

/// trypema's errors, and rl's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TrypemaError {
    /// A rate limit that is not positive and finite.
    InvalidRateLimit(String),
    /// A window below 1 second.
    InvalidWindowSize(String),
    /// A rate group size below 1 ms.
    InvalidBucketSize(String),
    /// A hard limit factor below 1 (or above rl's 1000).
    InvalidHardLimitFactor(String),
    /// A key that is empty, longer than 255 bytes or holds ':'.
    InvalidRedisKey(String),
    /// rl failed (an outage, a closed store, ...).
    Rl(crate::Error),
}

impl fmt::Display for TrypemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrypemaError::InvalidRateLimit(m) => write!(f, "invalid rate limit: {m}"),
            TrypemaError::InvalidWindowSize(m) => write!(f, "invalid window size: {m}"),
            TrypemaError::InvalidBucketSize(m) => write!(f, "invalid bucket size: {m}"),
            TrypemaError::InvalidHardLimitFactor(m) => write!(f, "invalid hard limit factor: {m}"),
            TrypemaError::InvalidRedisKey(m) => write!(f, "invalid Redis key: {m}"),
            TrypemaError::Rl(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TrypemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TrypemaError::Rl(e) => Some(e),
            _ => None,
        }
    }
}

impl From<crate::Error> for TrypemaError {
    fn from(e: crate::Error) -> Self {
        TrypemaError::Rl(e)
    }
}

/// A user key: not empty, at most 255 bytes, no ':' (trypema's rules).
#[derive(Debug, Clone, PartialEq, PartialOrd, Hash, Eq)]
pub struct RedisKey(String);

impl RedisKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The default prefix, "trypema".
    pub fn default_prefix() -> Self {
        RedisKey("trypema".into())
    }

    pub fn new(value: String) -> Result<Self, TrypemaError> {
        Self::try_from(value)
    }

    pub fn new_or_panic(value: String) -> Self {
        Self::try_from(value).unwrap()
    }
}

impl fmt::Display for RedisKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RedisKey {
    type Error = TrypemaError;

    fn try_from(value: String) -> Result<Self, TrypemaError> {
        if value.is_empty() {
            Err(TrypemaError::InvalidRedisKey("Redis key must not be empty".into()))
        } else if value.len() > 255 {
            Err(TrypemaError::InvalidRedisKey("Redis key must not be longer than 255 characters".into()))
        } else if value.contains(':') {
            Err(TrypemaError::InvalidRedisKey("Redis key must not contain colons".into()))
        } else {
            Ok(RedisKey(value))
        }
    }
}

impl TryFrom<&str> for RedisKey {
    type Error = TrypemaError;

    fn try_from(value: &str) -> Result<Self, TrypemaError> {
        Self::try_from(value.to_owned())
    }
}

/// Requests per second, positive (non-integer rates allowed).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct RateLimit(f64);

impl RateLimit {
    pub fn new(per_second: f64) -> Result<Self, TrypemaError> {
        Self::try_from(per_second)
    }

    pub fn per_second(per_second: f64) -> Result<Self, TrypemaError> {
        Self::try_from(per_second)
    }

    pub fn as_per_second(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for RateLimit {
    type Error = TrypemaError;

    fn try_from(v: f64) -> Result<Self, TrypemaError> {
        if v.is_finite() && v > 0.0 {
            Ok(RateLimit(v))
        } else {
            Err(TrypemaError::InvalidRateLimit("Rate limit must be greater than 0".into()))
        }
    }
}

/// The sliding window, in whole seconds (at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WindowSizeSeconds(u64);

impl WindowSizeSeconds {
    pub fn as_seconds(self) -> u64 {
        self.0
    }
}

impl TryFrom<u64> for WindowSizeSeconds {
    type Error = TrypemaError;

    fn try_from(v: u64) -> Result<Self, TrypemaError> {
        if v >= 1 {
            Ok(WindowSizeSeconds(v))
        } else {
            Err(TrypemaError::InvalidWindowSize("Window size must be at least 1".into()))
        }
    }
}

/// trypema's bucket coalescing interval (at least 1 ms): checked, not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RateGroupSizeMs(u64);

impl TryFrom<u64> for RateGroupSizeMs {
    type Error = TrypemaError;

    fn try_from(v: u64) -> Result<Self, TrypemaError> {
        if v >= 1 {
            Ok(RateGroupSizeMs(v))
        } else {
            Err(TrypemaError::InvalidBucketSize("Bucket size must be at least 1".into()))
        }
    }
}

/// The suppressed strategy's hard limit, as a multiple of the rate (at least 1; default 1).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct HardLimitFactor(f64);

impl Default for HardLimitFactor {
    fn default() -> Self {
        HardLimitFactor(1.0)
    }
}

impl HardLimitFactor {
    pub fn new(v: f64) -> Result<Self, TrypemaError> {
        Self::try_from(v)
    }

    pub fn as_multiplier(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for HardLimitFactor {
    type Error = TrypemaError;

    fn try_from(v: f64) -> Result<Self, TrypemaError> {
        if v.is_finite() && v >= 1.0 {
            Ok(HardLimitFactor(v))
        } else {
            Err(TrypemaError::InvalidHardLimitFactor("Hard limit factor must be greater than or equal to 1".into()))
        }
    }
}

/// What a call decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateLimitDecision {
    /// Admitted (and, for `inc`, recorded).
    Allowed,
    /// Denied, nothing recorded.
    #[non_exhaustive]
    Rejected {
        window_size_seconds: u64,
        /// rl's exact wait until the same call is admitted, in ms (rounded up).
        retry_after_ms: u64,
        /// The count that wait makes room for: the count asked for.
        remaining_after_waiting: u64,
    },
    /// The suppressed strategy between the limit and the hard limit.
    #[non_exhaustive]
    Suppressed {
        /// The share of calls suppressed now (0 to 1).
        suppression_factor: f64,
        /// Whether this call was admitted: the decision to act on.
        is_allowed: bool,
    },
}

/// The options of the in-process provider (rl's memory:// store).
#[derive(Debug, Clone, Copy)]
pub struct LocalRateLimiterOptions {
    pub window_size_seconds: WindowSizeSeconds,
    pub rate_group_size_ms: RateGroupSizeMs,
    pub hard_limit_factor: HardLimitFactor,
}

/// The options of the Redis provider: an rl store where trypema took a
/// connection manager.
#[derive(Debug, Clone)]
pub struct RedisRateLimiterOptions {
    pub store: Store,
    /// Default "trypema".
    pub prefix: Option<RedisKey>,
    pub window_size_seconds: WindowSizeSeconds,
    pub rate_group_size_ms: RateGroupSizeMs,
    pub hard_limit_factor: HardLimitFactor,
}

#[derive(Debug, Clone)]
pub struct RateLimiterOptions {
    pub local: LocalRateLimiterOptions,
    pub redis: RedisRateLimiterOptions,
}

/// The two providers, as trypema's `RateLimiter` has them.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    local: RedisRateLimiterProvider,
    redis: RedisRateLimiterProvider,
}

impl RateLimiter {
    pub fn new(options: RateLimiterOptions) -> RateLimiter {
        let memory = Store::open("memory://").expect("memory:// always opens");
        let l = options.local;
        RateLimiter {
            local: RedisRateLimiterProvider::new(
                memory,
                RedisKey::default_prefix(),
                l.window_size_seconds,
                l.hard_limit_factor,
            ),
            redis: RedisRateLimiterProvider::from_options(options.redis),
        }
    }

    pub fn redis(&self) -> &RedisRateLimiterProvider {
        &self.redis
    }

    /// The in-process provider (memory://), with the same strategies.
    pub fn local(&self) -> &RedisRateLimiterProvider {
        &self.local
    }
}

/// The absolute and suppressed strategies over one store.
#[derive(Debug, Clone)]
pub struct RedisRateLimiterProvider {
    absolute: AbsoluteRedisRateLimiter,
    suppressed: SuppressedRedisRateLimiter,
}

impl RedisRateLimiterProvider {
    pub fn from_options(o: RedisRateLimiterOptions) -> RedisRateLimiterProvider {
        Self::new(
            o.store,
            o.prefix.unwrap_or_else(RedisKey::default_prefix),
            o.window_size_seconds,
            o.hard_limit_factor,
        )
    }

    fn new(store: Store, prefix: RedisKey, window: WindowSizeSeconds, hard: HardLimitFactor) -> Self {
        RedisRateLimiterProvider {
            absolute: AbsoluteRedisRateLimiter(Strategy::new(store.clone(), &prefix, "absolute", window, None)),
            suppressed: SuppressedRedisRateLimiter(Strategy::new(store, &prefix, "suppressed", window, Some(hard))),
        }
    }

    pub fn absolute(&self) -> &AbsoluteRedisRateLimiter {
        &self.absolute
    }

    pub fn suppressed(&self) -> &SuppressedRedisRateLimiter {
        &self.suppressed
    }
}

/// One strategy: an rl limiter per rate limit asked for, made on first use.
#[derive(Clone)]
struct Strategy {
    store: Store,
    name: String,
    window: u64,
    hard: Option<HardLimitFactor>,
    limiters: Arc<Mutex<HashMap<u64, crate::Limiter>>>,
    // The rate of each key's last inc, for is_allowed.
    rates: Arc<Mutex<HashMap<String, RateLimit>>>,
}

impl fmt::Debug for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.name, self.store)
    }
}

impl Strategy {
    fn new(
        store: Store,
        prefix: &RedisKey,
        strategy: &str,
        window: WindowSizeSeconds,
        hard: Option<HardLimitFactor>,
    ) -> Self {
        Strategy {
            store,
            name: format!("{prefix}_{strategy}"),
            window: window.0,
            hard,
            limiters: Default::default(),
            rates: Default::default(),
        }
    }

    fn limiter(&self, rate: &RateLimit) -> Result<crate::Limiter, TrypemaError> {
        let bits = rate.0.to_bits();
        if let Some(l) = self.limiters.lock().unwrap().get(&bits) {
            return Ok(l.clone());
        }
        let capacity = (rate.0 * self.window as f64).floor();
        if capacity < 1.0 {
            return Err(TrypemaError::InvalidRateLimit(format!(
                "window_size_seconds x rate_limit is {capacity}: below 1 request per window"
            )));
        }
        let mut cfg = LimiterConfig::new(format!("{}/{}s", capacity as i64, self.window)).name(self.name.clone());
        cfg = match self.hard {
            None => cfg.algorithm(Algorithm::SlidingLog),
            Some(h) => cfg.algorithm(Algorithm::Suppressed).setting("hard_limit_factor", format!("{:.3}", h.0)),
        };
        let l = self.store.limiter(&cfg)?;
        Ok(self.limiters.lock().unwrap().entry(bits).or_insert(l).clone())
    }

    fn answer(&self, d: &Decision, count: u64) -> RateLimitDecision {
        let rejected = || RateLimitDecision::Rejected {
            window_size_seconds: self.window,
            retry_after_ms: d.retry_after.map_or(u64::MAX, |r| r.as_micros().div_ceil(1000) as u64),
            remaining_after_waiting: count,
        };
        match (self.hard.is_some(), d.allowed) {
            (false, true) => RateLimitDecision::Allowed,
            (false, false) => rejected(),
            (true, _) if d.suppression_factor == 0.0 && d.allowed => RateLimitDecision::Allowed,
            (true, false) if d.suppression_factor >= 1.0 => rejected(),
            (true, is_allowed) => {
                RateLimitDecision::Suppressed { suppression_factor: d.suppression_factor, is_allowed }
            }
        }
    }

    async fn inc(&self, key: &RedisKey, rate: &RateLimit, count: u64) -> Result<RateLimitDecision, TrypemaError> {
        let lim = self.limiter(rate)?;
        {
            let mut rates = self.rates.lock().unwrap();
            if rates.get(key.as_str()) != Some(rate) {
                rates.insert(key.0.clone(), *rate);
            }
        }
        let cost = i64::try_from(count).unwrap_or(i64::MAX);
        let d = lim.acquire(key.as_str(), cost).await?;
        Ok(self.answer(&d, count))
    }

    async fn peek(&self, key: &RedisKey, cost: i64) -> Result<Option<Decision>, TrypemaError> {
        let rate = self.rates.lock().unwrap().get(key.as_str()).copied();
        let Some(rate) = rate else { return Ok(None) };
        Ok(Some(self.limiter(&rate)?.peek(key.as_str(), cost).await?))
    }
}

/// The absolute strategy: a sliding window of `window_size_seconds` holding
/// at most `window_size_seconds × rate_limit`, exactly (rl's sliding_log).
#[derive(Debug, Clone)]
pub struct AbsoluteRedisRateLimiter(Strategy);

impl AbsoluteRedisRateLimiter {
    /// Decides `count` units and records them when admitted.
    pub async fn inc(
        &self,
        key: &RedisKey,
        rate_limit: &RateLimit,
        count: u64,
    ) -> Result<RateLimitDecision, TrypemaError> {
        self.0.inc(key, rate_limit, count).await
    }

    /// Would one more unit be admitted? Records nothing.
    pub async fn is_allowed(&self, key: &RedisKey) -> Result<RateLimitDecision, TrypemaError> {
        Ok(match self.0.peek(key, 1).await? {
            None => RateLimitDecision::Allowed,
            Some(d) => self.0.answer(&d, 1),
        })
    }

    /// Forgets the key's state.
    pub async fn delete(&self, key: &RedisKey) -> Result<(), TrypemaError> {
        let rate = self.0.rates.lock().unwrap().get(key.as_str()).copied();
        if let Some(rate) = rate {
            self.0.limiter(&rate)?.reset(key.as_str()).await?;
        }
        Ok(())
    }
}

/// The suppressed strategy: admits below the rate, denies above rate ×
/// hard_limit_factor, and in between admits with a probability that steers
/// the accepted rate to the limit (rl's suppressed algorithm).
#[derive(Debug, Clone)]
pub struct SuppressedRedisRateLimiter(Strategy);

impl SuppressedRedisRateLimiter {
    pub async fn inc(
        &self,
        key: &RedisKey,
        rate_limit: &RateLimit,
        count: u64,
    ) -> Result<RateLimitDecision, TrypemaError> {
        self.0.inc(key, rate_limit, count).await
    }

    /// The key's current suppression factor (0 for a key this process never incremented).
    pub async fn get_suppression_factor(&self, key: &RedisKey) -> Result<f64, TrypemaError> {
        Ok(self.0.peek(key, 0).await?.map_or(0.0, |d| d.suppression_factor))
    }
}
