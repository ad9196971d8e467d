//! The HTTP header fields of a decision (RateLimit-Policy, RateLimit,
//! Retry-After), rendered by the core (rl_headers_render) so every binding's
//! middleware sends the same bytes.
use std::ffi::CStr;

use rl_sys as sys;

use crate::config::c_text;
use crate::decision::Decision;
use crate::error::{check, static_str, Result};
use crate::limiter::{Limit, Limiter};

/// The fields to send, in the order a response carries them; a field is
/// `None` where it is not sent (Retry-After of an admission, every field of
/// a fail-open decision).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    pub ratelimit_policy: Option<String>,
    pub ratelimit: Option<String>,
    pub retry_after: Option<String>,
}

impl Headers {
    /// (field name, value) of every field sent ("RateLimit-Policy", ...).
    pub fn fields(&self) -> Vec<(&'static str, &str)> {
        [&self.ratelimit_policy, &self.ratelimit, &self.retry_after]
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let name = static_str(unsafe { sys::rl_header_name(i as i32) })?;
                v.as_deref().map(|v| (name, v))
            })
            .collect()
    }
}

/// The fields of `decision` for a limiter named `name` with `limits`.
pub fn render_headers(name: &str, limits: &[Limit], decision: &Decision) -> Result<Headers> {
    let raw: Vec<_> = limits
        .iter()
        .map(|l| sys::rl_limit_info {
            limit: l.limit,
            window_us: i64::try_from(l.window.as_micros()).unwrap_or(i64::MAX),
            burst: l.burst,
        })
        .collect();
    render(name, &raw, decision)
}

fn render(name: &str, limits: &[sys::rl_limit_info], decision: &Decision) -> Result<Headers> {
    let name_c = c_text(name, "name")?;
    let d = decision.to_raw();
    let mut values: [*mut core::ffi::c_char; sys::RL_HEADER_COUNT] = [core::ptr::null_mut(); sys::RL_HEADER_COUNT];
    check(|err| unsafe {
        sys::rl_headers_render(
            name_c.as_ptr(),
            limits.as_ptr(),
            limits.len(),
            &d,
            values.as_mut_ptr(),
            values.len(),
            err,
        )
    })?;
    let mut out = values.map(|p| {
        if p.is_null() {
            None
        } else {
            let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            unsafe { sys::rl_string_free(p) };
            Some(s)
        }
    });
    Ok(Headers {
        ratelimit_policy: out[sys::RL_HEADER_RATELIMIT_POLICY as usize].take(),
        ratelimit: out[sys::RL_HEADER_RATELIMIT as usize].take(),
        retry_after: out[sys::RL_HEADER_RETRY_AFTER as usize].take(),
    })
}

impl Limiter {
    /// The header fields of a decision of this limiter.
    pub fn headers(&self, decision: &Decision) -> Result<Headers> {
        render(self.name(), self.raw_limits(), decision)
    }
}
