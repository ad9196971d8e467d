//! Completions: rl runs a callback on its own thread; the callback's
//! user_data is a boxed one-shot sender, taken back exactly once here. The
//! callback only copies what rl handed it and sends it: no user code runs on
//! rl's thread, and a panic (there should be none) is caught, since one
//! escaping `extern "C"` would abort the process.
use core::ffi::c_void;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use rl_sys as sys;
use tokio::sync::oneshot;

use crate::decision::Decision;
use crate::error::{Error, Result};

pub(crate) type DecisionTx = oneshot::Sender<Result<Decision>>;
pub(crate) type BatchTx = oneshot::Sender<Result<Vec<Decision>>>;
pub(crate) type BatchEachTx = oneshot::Sender<Vec<Result<Decision>>>;

/// The user_data of a call: the sender, boxed. Taken back by the callback,
/// or by the caller when the call did not start (the callback then never runs).
pub(crate) fn user_data<T>(tx: oneshot::Sender<T>) -> *mut c_void {
    Box::into_raw(Box::new(tx)).cast()
}

/// Blocks this thread until a completion's answer comes (a blocking call
/// made of an asynchronous one). Parks rather than `blocking_recv`, which
/// panics when called from inside a tokio runtime.
pub(crate) fn wait_for<T>(mut rx: oneshot::Receiver<T>) -> std::result::Result<T, oneshot::error::RecvError> {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark()
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match Pin::new(&mut rx).poll(&mut cx) {
            Poll::Ready(r) => return r,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Takes back a user_data whose callback will never run.
pub(crate) unsafe fn reclaim<T>(ud: *mut c_void) {
    drop(Box::from_raw(ud.cast::<oneshot::Sender<T>>()));
}

pub(crate) unsafe extern "C" fn on_decision(
    ud: *mut c_void,
    status: sys::rl_status,
    decision: *const sys::rl_decision,
    err: *const sys::rl_error,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let tx = Box::from_raw(ud.cast::<DecisionTx>());
        let reply = if status == sys::RL_OK && !decision.is_null() {
            Ok(Decision::from_raw(&*decision))
        } else {
            Err(Error::copy(status, err))
        };
        let _ = tx.send(reply);
    }));
}

pub(crate) unsafe extern "C" fn on_batch(
    ud: *mut c_void,
    status: sys::rl_status,
    decisions: *const sys::rl_decision,
    count: usize,
    err: *const sys::rl_error,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let tx = Box::from_raw(ud.cast::<BatchTx>());
        let reply = if status == sys::RL_OK {
            Ok(slice(decisions, count).iter().map(Decision::from_raw).collect())
        } else {
            Err(Error::copy(status, err))
        };
        let _ = tx.send(reply);
    }));
}

pub(crate) unsafe extern "C" fn on_batch_each(
    ud: *mut c_void,
    decisions: *const sys::rl_decision,
    statuses: *const sys::rl_status,
    errors: *const *const sys::rl_error,
    count: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let tx = Box::from_raw(ud.cast::<BatchEachTx>());
        let _ = tx.send(each_results(slice(decisions, count), slice(statuses, count), slice(errors, count)));
    }));
}

/// The per-request results of a batch_each call (or of its callback).
pub(crate) unsafe fn each_results(
    decisions: &[sys::rl_decision],
    statuses: &[sys::rl_status],
    errors: &[*const sys::rl_error],
) -> Vec<Result<Decision>> {
    decisions
        .iter()
        .zip(statuses)
        .enumerate()
        .map(|(i, (d, &s))| {
            if s == sys::RL_OK {
                Ok(Decision::from_raw(d))
            } else {
                Err(Error::copy(s, errors.get(i).copied().unwrap_or(core::ptr::null())))
            }
        })
        .collect()
}

unsafe fn slice<'a, T>(p: *const T, count: usize) -> &'a [T] {
    if p.is_null() || count == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, count)
    }
}

/// A completion that never came: rl promises exactly one, so this is a bug.
pub(crate) fn lost() -> Error {
    Error::Internal("completion: the callback dropped its result".into())
}
