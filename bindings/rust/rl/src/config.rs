//! Typed limiter settings over rl_config (the names, choices and kinds are
//! checked against rl_setting_describe by tests/settings.rs), and the
//! settings table itself.
use std::ffi::CString;

use rl_sys as sys;

use crate::error::{check, static_str, Error, Result};

/// A rate-limiting algorithm (the `algorithm` setting; docs/algorithms.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// rl's default: a smooth rate with a burst.
    Gcra,
    TokenBucket,
    SlidingLog,
    SlidingWindow,
    FixedWindow,
    /// Admits below the limit, denies above limit × hard_limit_factor and
    /// in between admits with a probability that steers the accepted rate to
    /// the limit (trypema's suppressed strategy).
    Suppressed,
}

impl Algorithm {
    /// Every algorithm, in the settings table's order of choices.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Gcra,
        Algorithm::TokenBucket,
        Algorithm::SlidingLog,
        Algorithm::SlidingWindow,
        Algorithm::FixedWindow,
        Algorithm::Suppressed,
    ];

    /// The setting's value ("gcra", "token_bucket", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Gcra => "gcra",
            Algorithm::TokenBucket => "token_bucket",
            Algorithm::SlidingLog => "sliding_log",
            Algorithm::SlidingWindow => "sliding_window",
            Algorithm::FixedWindow => "fixed_window",
            Algorithm::Suppressed => "suppressed",
        }
    }
}

/// What a store outage gives a limiter's calls (the `on_failure` setting;
/// docs/failure.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OnFailure {
    /// rl's default: the call fails with the outage's error.
    Closed,
    /// The call is admitted, uncounted (`Source::FailOpen`).
    Open,
    /// An in-process limiter with `local_share` of each limit decides (`Source::Local`).
    Local,
}

impl OnFailure {
    pub const ALL: [OnFailure; 3] = [OnFailure::Closed, OnFailure::Open, OnFailure::Local];

    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Closed => "closed",
            OnFailure::Open => "open",
            OnFailure::Local => "local",
        }
    }
}

/// A limiter's settings. Unset fields are left to rl's defaults; rl checks
/// every value and names the one that is wrong.
///
/// ```
/// let cfg = rl::LimiterConfig::new("100/1m").algorithm(rl::Algorithm::Gcra).burst(20).name("api");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimiterConfig {
    settings: Vec<(String, String)>,
}

impl LimiterConfig {
    /// Settings with `limit` ("100/1m", or several: "10/s, 1000/h").
    pub fn new(limit: impl Into<String>) -> LimiterConfig {
        LimiterConfig::default().setting("limit", limit)
    }

    /// The algorithm (default gcra).
    pub fn algorithm(self, a: Algorithm) -> Self {
        self.setting("algorithm", a.as_str())
    }

    /// The capacity of gcra and token_bucket (default: the limit).
    pub fn burst(self, burst: i64) -> Self {
        self.setting("burst", burst.to_string())
    }

    /// The namespace of the limiter's keys (default "default"); shared by
    /// every rl user, in any language, that names the same limiter.
    pub fn name(self, name: impl Into<String>) -> Self {
        self.setting("name", name)
    }

    /// What a store outage gives (default closed).
    pub fn on_failure(self, f: OnFailure) -> Self {
        self.setting("on_failure", f.as_str())
    }

    /// The share of each limit one process may admit under OnFailure::Local
    /// ("1/4" or "0.25").
    pub fn local_share(self, share: impl Into<String>) -> Self {
        self.setting("local_share", share)
    }

    /// Any other limiter setting of rl_config_describe ("granularity",
    /// "hard_limit_factor", ...), as text, applied in the order given.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }

    /// The settings in the order rl receives them.
    pub fn settings(&self) -> &[(String, String)] {
        &self.settings
    }

    pub(crate) fn to_native(&self) -> Result<NativeConfig> {
        let cfg = NativeConfig(unsafe { sys::rl_config_new() });
        if cfg.0.is_null() {
            return Err(Error::NoMemory("config: out of memory".into()));
        }
        for (key, value) in &self.settings {
            let k = c_text(key, "setting key")?;
            let v = c_text(value, key)?;
            check(|err| unsafe { sys::rl_config_set(cfg.0, k.as_ptr(), v.as_ptr(), err) })?;
        }
        Ok(cfg)
    }
}

pub(crate) struct NativeConfig(pub(crate) *mut sys::rl_config);

impl Drop for NativeConfig {
    fn drop(&mut self) {
        unsafe { sys::rl_config_free(self.0) }
    }
}

/// Text as C receives it, refused when it holds a NUL byte (rl_text_check:
/// the core's message, "<what>: contains a NUL byte").
pub(crate) fn c_text(text: &str, what: &str) -> Result<CString> {
    let what_c = CString::new(what.replace('\0', "\\0")).expect("no NUL left");
    check(|err| unsafe { sys::rl_text_check(text.as_ptr().cast(), text.len(), what_c.as_ptr(), err) })?;
    Ok(CString::new(text).expect("rl_text_check found no NUL"))
}

/// One setting of rl's settings table (rl_setting_describe).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingInfo {
    pub name: &'static str,
    /// "store" (a URL query key) or "limiter" (a LimiterConfig setting).
    pub scope: &'static str,
    /// "text", "count", "duration", "choice", "boolean", "rates", "counts",
    /// "decimal", "fraction" or "path".
    pub kind: &'static str,
    /// kind "choice": its words.
    pub choices: Vec<&'static str>,
    /// The value an unset setting has, when one spells it.
    pub default_value: Option<&'static str>,
    pub description: &'static str,
    /// kind "count": the range (0 and 0 otherwise).
    pub range: (i64, i64),
    /// A credential: its value is never shown.
    pub secret: bool,
}

/// Every setting rl knows, in its table's order.
pub fn settings() -> Vec<SettingInfo> {
    let mut out = Vec::new();
    for index in 0.. {
        let mut info = sys::rl_setting_info {
            version: sys::RL_SETTING_INFO_VERSION,
            secret: 0,
            name: core::ptr::null(),
            scope: core::ptr::null(),
            kind: core::ptr::null(),
            choices: core::ptr::null(),
            default_value: core::ptr::null(),
            description: core::ptr::null(),
            range_min: 0,
            range_max: 0,
        };
        if check(|err| unsafe { sys::rl_setting_describe(index, &mut info, err) }).is_err() {
            break;
        }
        out.push(SettingInfo {
            name: static_str(info.name).unwrap_or(""),
            scope: static_str(info.scope).unwrap_or(""),
            kind: static_str(info.kind).unwrap_or(""),
            choices: static_str(info.choices).map(|c| c.split(',').collect()).unwrap_or_default(),
            default_value: static_str(info.default_value),
            description: static_str(info.description).unwrap_or(""),
            range: (info.range_min, info.range_max),
            secret: info.secret != 0,
        });
    }
    out
}
