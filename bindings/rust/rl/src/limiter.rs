//! A limiter: acquire, peek, refund, reset, acquire_wait and batches, each as
//! an `async fn` and as a `*_blocking` call.
//!
//! Which to use where:
//! - in async code (a tokio task, an axum handler, a tower service): the
//!   `async fn`s. On Redis they start rl's asynchronous call and await its
//!   completion, so the worker thread runs other tasks meanwhile; on
//!   memory:// (which never waits for I/O) they decide inline.
//! - in synchronous code (a plain thread, `spawn_blocking`): the
//!   `*_blocking` calls. On Redis each blocks its thread for a round trip
//!   (`acquire_wait_blocking` for the whole wait): never call them from a
//!   tokio worker thread, which would stall every task on it; wrap them in
//!   `tokio::task::spawn_blocking` there, or use the `async fn`s.
//!
//! Deadlines: [`Limiter::with_timeout`] gives a handle whose every call
//! carries a deadline to the store (rl_request's timeout_us), as a Go
//! context's or a Java timeout does: the store call keeps the earlier of it
//! and the store's `timeout_ms`, and fails with `Error::Timeout` past it.
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rl_sys as sys;
use tokio::sync::oneshot;

use crate::complete::{self, on_batch, on_batch_each, on_decision, reclaim, user_data};
use crate::config::LimiterConfig;
use crate::decision::{empty_decision, Decision};
use crate::error::{check, Error, Result};
use crate::store::{NativeStore, Store};

pub(crate) struct NativeLimiter {
    pub(crate) ptr: *mut sys::rl_limiter,
    name: String,
    limits: Vec<Limit>,
    raw_limits: Vec<sys::rl_limit_info>,
    // The store's native handle outlives the limiter (and so every call).
    store: Arc<NativeStore>,
}

// rl_limiter is thread-safe (rl.h) but for rl_limiter_free, run only in Drop.
unsafe impl Send for NativeLimiter {}
unsafe impl Sync for NativeLimiter {}

impl Drop for NativeLimiter {
    fn drop(&mut self) {
        // Pending asynchronous calls still complete (rl.h); never reached
        // inside a completion, which holds no handle.
        unsafe { sys::rl_limiter_free(self.ptr) }
    }
}

/// One limit of a limiter: `limit` units per `window`, capacity `burst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub limit: i64,
    pub window: Duration,
    pub burst: i64,
}

/// A limiter handle: `Send + Sync`, cheap to clone (an `Arc`); freed when
/// its last clone and last call in flight are gone.
#[derive(Clone)]
pub struct Limiter {
    inner: Arc<NativeLimiter>,
    // Each call's deadline at the store in µs (rl_request.timeout_us); 0:
    // the store's timeout_ms alone.
    timeout_us: i64,
}

/// One request of a batch: a key and its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub key: &'a [u8],
    pub cost: i64,
}

impl<'a> Request<'a> {
    pub fn new(key: &'a (impl AsRef<[u8]> + ?Sized), cost: i64) -> Request<'a> {
        Request { key: key.as_ref(), cost }
    }
}

#[derive(Clone, Copy)]
enum Op {
    Acquire = sys::RL_OP_ACQUIRE as isize,
    Peek = sys::RL_OP_PEEK as isize,
    Refund = sys::RL_OP_REFUND as isize,
    Reset = sys::RL_OP_RESET as isize,
}

fn request(key: &[u8], cost: i64, timeout_us: i64) -> sys::rl_request {
    sys::rl_request { version: sys::RL_REQUEST_VERSION, key: key.as_ptr().cast(), key_len: key.len(), cost, timeout_us }
}

/// A deadline in whole µs, at least 1 (0 would mean "none"), saturated at
/// the largest rl takes.
fn deadline_us(timeout: Duration) -> i64 {
    i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX).max(1)
}

fn wait_us(timeout: Option<Duration>) -> i64 {
    timeout.map_or(sys::RL_MAX_WAIT_US, |t| i64::try_from(t.as_micros()).unwrap_or(sys::RL_MAX_WAIT_US))
}

/// The wait of an acquire_wait future: dropped before its answer was taken,
/// it cancels the wait (rl refunds a late admission), then frees the handle.
struct WaitGuard {
    wait: *mut sys::rl_wait,
    answered: bool,
}

// rl_wait_cancel and rl_wait_free are thread-safe (rl.h).
unsafe impl Send for WaitGuard {}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        unsafe {
            if !self.answered {
                sys::rl_wait_cancel(self.wait);
            }
            sys::rl_wait_free(self.wait);
        }
    }
}

// Here, not in store.rs: the store knows nothing of limiters.
impl Store {
    /// A limiter over this store.
    pub fn limiter(&self, config: &LimiterConfig) -> Result<Limiter> {
        Limiter::new(self, config)
    }
}

impl Limiter {
    fn new(store: &Store, config: &LimiterConfig) -> Result<Limiter> {
        let cfg = config.to_native()?;
        let mut ptr: *mut sys::rl_limiter = core::ptr::null_mut();
        check(|err| unsafe { sys::rl_limiter_new(store.inner.ptr, cfg.0, &mut ptr, err) })?;
        let count = unsafe { sys::rl_limiter_limits(ptr, core::ptr::null_mut(), 0) };
        let mut raw_limits = vec![sys::rl_limit_info { limit: 0, window_us: 0, burst: 0 }; count];
        unsafe { sys::rl_limiter_limits(ptr, raw_limits.as_mut_ptr(), count) };
        let name = crate::error::static_str(unsafe { sys::rl_limiter_name(ptr) }).unwrap_or("default").to_owned();
        let limits = raw_limits
            .iter()
            .map(|l| Limit { limit: l.limit, window: Duration::from_micros(l.window_us.max(0) as u64), burst: l.burst })
            .collect();
        let inner = Arc::new(NativeLimiter { ptr, name, limits, raw_limits, store: store.inner.clone() });
        Ok(Limiter { inner, timeout_us: 0 })
    }

    /// This limiter (a clone of the handle) with a deadline on every call:
    /// each acquire, peek, refund, reset, each store call of an
    /// acquire_wait, and each batch (which travels as one) must be answered
    /// by the store within `timeout`, or fails with `Error::Timeout` (an
    /// outage: with `on_failure = open` or `local` that decides instead).
    /// The store's `timeout_ms` still applies when it is shorter. memory://
    /// never waits for I/O, so there it changes nothing. Less than 1 µs is
    /// taken as 1 µs.
    pub fn with_timeout(&self, timeout: Duration) -> Limiter {
        Limiter { inner: self.inner.clone(), timeout_us: deadline_us(timeout) }
    }

    /// The deadline of [`with_timeout`](Self::with_timeout), if any.
    pub fn timeout(&self) -> Option<Duration> {
        (self.timeout_us > 0).then(|| Duration::from_micros(self.timeout_us as u64))
    }

    fn requests(&self, requests: &[Request<'_>]) -> Vec<sys::rl_request> {
        requests.iter().map(|r| request(r.key, r.cost, self.timeout_us)).collect()
    }

    /// The limiter's `name` setting ("default" when unset).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its limits, in the order of its `limit` setting.
    pub fn limits(&self) -> &[Limit] {
        &self.inner.limits
    }

    pub(crate) fn raw_limits(&self) -> &[sys::rl_limit_info] {
        &self.inner.raw_limits
    }

    /// The store it decides in.
    pub fn store(&self) -> Store {
        Store { inner: self.inner.store.clone() }
    }

    fn inline(&self) -> bool {
        self.inner.store.info.in_process
    }

    // ---- blocking calls -------------------------------------------------

    fn sync_call(&self, op: Op, key: &[u8], cost: i64) -> Result<Decision> {
        if matches!(op, Op::Reset) && self.timeout_us > 0 && !self.inline() {
            // rl_limiter_reset takes no request, so no deadline: the
            // asynchronous reset does, and this thread waits for it.
            let rx = self.start_call(op, key, cost)?;
            return complete::wait_for(rx).unwrap_or_else(|_| Err(complete::lost()));
        }
        let req = request(key, cost, self.timeout_us);
        let mut d = empty_decision();
        let lim = self.inner.ptr;
        check(|err| unsafe {
            match op {
                Op::Acquire => sys::rl_limiter_acquire(lim, &req, &mut d, err),
                Op::Peek => sys::rl_limiter_peek(lim, &req, &mut d, err),
                Op::Refund => sys::rl_limiter_refund(lim, &req, &mut d, err),
                Op::Reset => sys::rl_limiter_reset(lim, req.key, req.key_len, err),
            }
        })?;
        Ok(Decision::from_raw(&d))
    }

    /// Decides one request of `cost` units on `key` and records it when
    /// admitted. Blocks for one store round trip (none on memory://).
    pub fn acquire_blocking(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.sync_call(Op::Acquire, key.as_ref(), cost)
    }

    /// Decides without recording anything (cost 0: the key's state).
    pub fn peek_blocking(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.sync_call(Op::Peek, key.as_ref(), cost)
    }

    /// Gives `cost` units back to the key; the decision describes it afterwards.
    pub fn refund_blocking(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.sync_call(Op::Refund, key.as_ref(), cost)
    }

    /// Forgets the key's state: it is back to full capacity.
    pub fn reset_blocking(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.sync_call(Op::Reset, key.as_ref(), 1).map(drop)
    }

    /// Acquires, and while denied waits as told and tries again, until
    /// admitted or until `timeout` (None: no deadline) would pass: then the
    /// last denial. Blocks the thread for the whole wait.
    pub fn acquire_wait_blocking(
        &self,
        key: impl AsRef<[u8]>,
        cost: i64,
        timeout: Option<Duration>,
    ) -> Result<Decision> {
        let req = request(key.as_ref(), cost, self.timeout_us);
        let mut d = empty_decision();
        check(|err| unsafe { sys::rl_limiter_acquire_wait(self.inner.ptr, &req, wait_us(timeout), &mut d, err) })?;
        Ok(Decision::from_raw(&d))
    }

    /// Acquires every request (each decided on its own, in order) in one
    /// round trip per store node. A malformed request fails the whole batch
    /// (the message names its index) and a store failure fails all of it.
    pub fn acquire_batch_blocking(&self, requests: &[Request<'_>]) -> Result<Vec<Decision>> {
        let reqs = self.requests(requests);
        let mut ds = vec![empty_decision(); reqs.len()];
        check(|err| unsafe {
            sys::rl_limiter_acquire_batch(self.inner.ptr, reqs.as_ptr(), reqs.len(), ds.as_mut_ptr(), err)
        })?;
        Ok(ds.iter().map(Decision::from_raw).collect())
    }

    /// acquire_batch with a result per request: where one request's store
    /// call fails, the others still get their decisions. The outer error is
    /// the batch's own (malformed, closed store).
    pub fn acquire_batch_each_blocking(&self, requests: &[Request<'_>]) -> Result<Vec<Result<Decision>>> {
        let reqs = self.requests(requests);
        let n = reqs.len();
        let mut ds = vec![empty_decision(); n];
        let mut statuses = vec![sys::RL_OK; n];
        let mut errors: Vec<*mut sys::rl_error> = vec![core::ptr::null_mut(); n];
        check(|err| unsafe {
            sys::rl_limiter_acquire_batch_each(
                self.inner.ptr,
                reqs.as_ptr(),
                n,
                ds.as_mut_ptr(),
                statuses.as_mut_ptr(),
                errors.as_mut_ptr(),
                err,
            )
        })?;
        let borrowed: Vec<*const sys::rl_error> = errors.iter().map(|e| e.cast_const()).collect();
        let out = unsafe { complete::each_results(&ds, &statuses, &borrowed) };
        for e in errors {
            unsafe { sys::rl_error_free(e) };
        }
        Ok(out)
    }

    // ---- async calls ----------------------------------------------------

    /// Starts an asynchronous call whose completion sends a T: `begin`
    /// passes the user_data on to rl. When the call does not start, its
    /// callback never runs and the sender is taken back here.
    fn start<T>(
        begin: impl FnOnce(*mut core::ffi::c_void, *mut *mut sys::rl_error) -> sys::rl_status,
    ) -> Result<oneshot::Receiver<T>> {
        let (tx, rx) = oneshot::channel::<T>();
        let ud = user_data(tx);
        let started = check(|err| begin(ud, err));
        if started.is_err() {
            unsafe { reclaim::<T>(ud) };
        }
        started.map(|()| rx)
    }

    fn start_call(&self, op: Op, key: &[u8], cost: i64) -> Result<oneshot::Receiver<Result<Decision>>> {
        let req = request(key, cost, self.timeout_us);
        Self::start(|ud, err| unsafe {
            sys::rl_limiter_call_async(self.inner.ptr, op as sys::rl_op, &req, Some(on_decision), ud, err)
        })
    }

    async fn call(&self, op: Op, key: &[u8], cost: i64) -> Result<Decision> {
        if self.inline() {
            return self.sync_call(op, key, cost);
        }
        let rx = self.start_call(op, key, cost)?;
        rx.await.unwrap_or_else(|_| Err(complete::lost()))
    }

    /// [`acquire_blocking`](Self::acquire_blocking) without blocking the thread.
    pub async fn acquire(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.call(Op::Acquire, key.as_ref(), cost).await
    }

    /// [`peek_blocking`](Self::peek_blocking) without blocking the thread.
    pub async fn peek(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.call(Op::Peek, key.as_ref(), cost).await
    }

    /// [`refund_blocking`](Self::refund_blocking) without blocking the thread.
    pub async fn refund(&self, key: impl AsRef<[u8]>, cost: i64) -> Result<Decision> {
        self.call(Op::Refund, key.as_ref(), cost).await
    }

    /// [`reset_blocking`](Self::reset_blocking) without blocking the thread.
    pub async fn reset(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.call(Op::Reset, key.as_ref(), 1).await.map(drop)
    }

    fn start_wait(
        &self,
        key: &[u8],
        cost: i64,
        timeout: Option<Duration>,
    ) -> Result<(WaitGuard, oneshot::Receiver<Result<Decision>>)> {
        let req = request(key, cost, self.timeout_us);
        let mut wait: *mut sys::rl_wait = core::ptr::null_mut();
        let rx = Self::start(|ud, err| unsafe {
            sys::rl_limiter_acquire_wait_start(
                self.inner.ptr,
                &req,
                wait_us(timeout),
                Some(on_decision),
                ud,
                &mut wait,
                err,
            )
        })?;
        Ok((WaitGuard { wait, answered: false }, rx))
    }

    /// [`acquire_wait_blocking`](Self::acquire_wait_blocking) without
    /// blocking anyone: the wait is a timer on the store's thread. Dropping
    /// the future before it is ready (a `tokio::time::timeout`, a `select!`,
    /// a client gone) cancels the wait (rl_wait_cancel): no store call starts
    /// after that, and an admission that nobody took is refunded by rl.
    pub async fn acquire_wait(&self, key: impl AsRef<[u8]>, cost: i64, timeout: Option<Duration>) -> Result<Decision> {
        let (mut guard, rx) = self.start_wait(key.as_ref(), cost, timeout)?;
        let reply = rx.await.unwrap_or_else(|_| Err(complete::lost()));
        guard.answered = true;
        reply
    }

    fn start_batch(&self, requests: &[Request<'_>]) -> Result<oneshot::Receiver<Result<Vec<Decision>>>> {
        let reqs = self.requests(requests);
        Self::start(|ud, err| unsafe {
            sys::rl_limiter_acquire_batch_async_versioned(
                self.inner.ptr,
                reqs.as_ptr(),
                reqs.len(),
                sys::RL_DECISION_VERSION,
                Some(on_batch),
                ud,
                err,
            )
        })
    }

    /// [`acquire_batch_blocking`](Self::acquire_batch_blocking) without blocking the thread.
    pub async fn acquire_batch(&self, requests: &[Request<'_>]) -> Result<Vec<Decision>> {
        if self.inline() {
            return self.acquire_batch_blocking(requests);
        }
        let rx = self.start_batch(requests)?;
        rx.await.unwrap_or_else(|_| Err(complete::lost()))
    }

    fn start_batch_each(&self, requests: &[Request<'_>]) -> Result<oneshot::Receiver<Vec<Result<Decision>>>> {
        let reqs = self.requests(requests);
        Self::start(|ud, err| unsafe {
            sys::rl_limiter_acquire_batch_each_async(
                self.inner.ptr,
                reqs.as_ptr(),
                reqs.len(),
                sys::RL_DECISION_VERSION,
                Some(on_batch_each),
                ud,
                err,
            )
        })
    }

    /// [`acquire_batch_each_blocking`](Self::acquire_batch_each_blocking) without blocking the thread.
    pub async fn acquire_batch_each(&self, requests: &[Request<'_>]) -> Result<Vec<Result<Decision>>> {
        if self.inline() {
            return self.acquire_batch_each_blocking(requests);
        }
        let rx = self.start_batch_each(requests)?;
        rx.await.map_err(|_| complete::lost())
    }
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.inner.name, self.inner.store.display)
    }
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Limiter({:?}, {})", self.inner.name, self.inner.store.display)
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync + Clone>() {}
    is::<Limiter>();
    is::<Store>();
    let _: fn(Error) = drop;
}
