//! rl for Rust: a distributed rate limiter whose state lives in process
//! (memory://) or in Redis (one server, TLS, Sentinel, Cluster), shared with
//! every other rl user of the same limiter, in any language.
//!
//! ```no_run
//! # async fn run() -> Result<(), rl::Error> {
//! let store = rl::Store::open("redis://127.0.0.1:6379")?;
//! let limiter = store.limiter(&rl::LimiterConfig::new("100/1m").burst(20).name("api"))?;
//! let d = limiter.acquire("user:42", 1).await?;
//! if d.allowed { /* admitted */ } else { /* denied: retry after d.retry_after */ }
//! # Ok(()) }
//! ```
//!
//! Every call exists as an `async fn` (for tokio tasks) and as a
//! `*_blocking` call (for plain threads): see [`Limiter`] for which to use
//! where. [`tower`] has a Layer for axum and tonic, [`trypema`] an API
//! shaped like trypema's Redis provider.
#![deny(missing_debug_implementations)]

mod complete;
mod config;
mod decision;
mod error;
mod headers;
mod limiter;
mod stats;
mod store;
#[cfg(feature = "tower")]
pub mod tower;
pub mod trypema;

pub use config::{settings, Algorithm, LimiterConfig, OnFailure, SettingInfo};
pub use decision::{Decision, Source};
pub use error::{Error, Result};
pub use headers::{render_headers, Headers};
pub use limiter::{Limit, Limiter, Request};
pub use stats::{BreakerState, LeaseStats, NodeBreaker, StoreStats, Verdicts};
pub use store::{Store, StoreInfo};

/// The version of the librl linked in ("1.7.0").
pub fn version() -> &'static str {
    error::static_str(unsafe { rl_sys::rl_version() }).unwrap_or("")
}

/// The longest key, in bytes.
pub const MAX_KEY_LEN: usize = rl_sys::RL_MAX_KEY_LEN;
