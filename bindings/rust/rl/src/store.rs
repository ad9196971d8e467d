//! A store: where rate-limit state lives (memory://, redis://, rediss://,
//! redis+sentinel://, redis+cluster://: every scheme and setting the core
//! accepts; docs/urls.md).
use std::ffi::CStr;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rl_sys as sys;

use crate::config::c_text;
use crate::error::{check, static_str, Error, Result};

pub(crate) struct NativeStore {
    pub(crate) ptr: *mut sys::rl_store,
    pub(crate) display: String,
    pub(crate) info: StoreInfo,
}

// rl_store is thread-safe (rl.h) but for rl_store_free, which runs only in
// Drop, once no other handle exists.
unsafe impl Send for NativeStore {}
unsafe impl Sync for NativeStore {}

impl Drop for NativeStore {
    fn drop(&mut self) {
        // Closes (completing what is in flight with RL_E_SHUTDOWN) and frees.
        // Never reached inside a completion: callbacks hold no handle.
        unsafe { sys::rl_store_free(self.ptr) }
    }
}

/// What a store is (rl_store_describe).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreInfo {
    /// "memory" or "redis".
    pub scheme: &'static str,
    /// State lives in this process: calls never wait for I/O.
    pub in_process: bool,
    /// Opened with clock=manual: time moves only through set_clock/advance_clock.
    pub manual_clock: bool,
}

/// A store handle: `Send + Sync`, cheap to clone (an `Arc`). The store is
/// closed by [`Store::close`] or when its last handle (every clone, every
/// limiter made from it, every call in flight) is dropped.
#[derive(Clone)]
pub struct Store {
    pub(crate) inner: Arc<NativeStore>,
}

impl Store {
    /// Opens a store from an rl URL ("memory://", "redis://user:pass@host:6379/0?timeout_ms=50",
    /// ...). Opening does not wait for Redis: the connection is made by the
    /// store's I/O thread, and calls fail as outages until it is up.
    pub fn open(url: &str) -> Result<Store> {
        let url_c = c_text(url, "url")?;
        let mut ptr: *mut sys::rl_store = core::ptr::null_mut();
        check(|err| unsafe { sys::rl_store_open(url_c.as_ptr(), core::ptr::null(), &mut ptr, err) })?;
        let display = unsafe { CStr::from_ptr(sys::rl_store_display_url(ptr)) }.to_string_lossy().into_owned();
        let mut raw = sys::rl_store_info {
            version: sys::RL_STORE_INFO_VERSION,
            in_process: 0,
            manual_clock: 0,
            scheme: core::ptr::null(),
            script_mode: core::ptr::null(),
            lua_mode: core::ptr::null(),
            module_nodes: 0,
            lua_nodes: 0,
        };
        let described = check(|err| unsafe { sys::rl_store_describe(ptr, &mut raw, err) });
        let inner = NativeStore {
            ptr,
            display,
            info: StoreInfo {
                scheme: static_str(raw.scheme).unwrap_or(""),
                in_process: raw.in_process != 0,
                manual_clock: raw.manual_clock != 0,
            },
        };
        described?;
        Ok(Store { inner: Arc::new(inner) })
    }

    /// Closes the store: every call in flight completes with
    /// `Error::Shutdown` before this returns, and every later call on the
    /// store or its limiters fails so. Idempotent. Blocks for that
    /// completion: from async code on a Redis store, call it through
    /// `tokio::task::spawn_blocking` or just drop the last handle.
    pub fn close(&self) {
        unsafe { sys::rl_store_close(self.inner.ptr) }
    }

    /// The URL in its display form: passwords and secret settings are "***".
    pub fn display_url(&self) -> &str {
        &self.inner.display
    }

    pub fn info(&self) -> &StoreInfo {
        &self.inner.info
    }

    /// clock=manual stores only: sets the store's time (µs; never backwards).
    pub fn set_clock(&self, now_us: i64) -> Result<()> {
        check(|err| unsafe { sys::rl_store_clock_set(self.inner.ptr, now_us, err) })
    }

    /// clock=manual stores only: moves the store's time by delta_us (>= 0).
    pub fn advance_clock_us(&self, delta_us: i64) -> Result<()> {
        check(|err| unsafe { sys::rl_store_clock_advance(self.inner.ptr, delta_us, err) })
    }

    /// clock=manual stores only: moves the store's time by `delta`.
    pub fn advance_clock(&self, delta: Duration) -> Result<()> {
        self.advance_clock_us(i64::try_from(delta.as_micros()).unwrap_or(i64::MAX))
    }

    /// The store's statistics in the Prometheus text format (rl_store_metrics).
    pub fn metrics(&self) -> Result<String> {
        let p = unsafe { sys::rl_store_metrics(self.inner.ptr) };
        if p.is_null() {
            return Err(Error::NoMemory("metrics: out of memory".into()));
        }
        let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        unsafe { sys::rl_string_free(p) };
        Ok(text)
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.display)
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Store({})", self.inner.display)
    }
}
