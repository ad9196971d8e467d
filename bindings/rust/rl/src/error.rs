//! rl's failures: one variant per `rl_status` of rl.h (pinned forever; new
//! ones are appended, hence `#[non_exhaustive]`), each with the core's
//! message. Being denied is not an error: it is a `Decision` with `allowed`
//! false.
use core::ffi::CStr;
use std::fmt;

use rl_sys as sys;

/// A failure reported by rl: its status and the message that names what
/// was wrong (the core's words, the same in every binding).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// RL_E_INVALID_ARG: an argument or setting was wrong; the message names it.
    InvalidArg(String),
    /// RL_E_TIMEOUT: the call did not complete within its deadline (an outage).
    Timeout(String),
    /// RL_E_BACKEND_UNAVAILABLE: the store (Redis) could not be reached (an outage).
    BackendUnavailable(String),
    /// RL_E_BACKEND_ERROR: the store answered with an error it should not have.
    BackendError(String),
    /// RL_E_SHUTDOWN: the store was closed.
    Shutdown(String),
    /// RL_E_NO_MEMORY: memory could not be allocated.
    NoMemory(String),
    /// RL_E_INTERNAL: a bug in rl: please report it with the message.
    Internal(String),
    /// RL_E_AUTH: the store refused the credentials.
    Auth(String),
    /// RL_E_UNSUPPORTED: a valid request this build or store does not support.
    Unsupported(String),
}

/// `Result` with rl's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error of `status` (an rl_status other than RL_OK) with `message`.
    /// A value rl.h does not know is `Internal`, naming the value.
    pub fn from_status(status: i32, message: impl Into<String>) -> Error {
        let m = message.into();
        match status {
            sys::RL_E_INVALID_ARG => Error::InvalidArg(m),
            sys::RL_E_TIMEOUT => Error::Timeout(m),
            sys::RL_E_BACKEND_UNAVAILABLE => Error::BackendUnavailable(m),
            sys::RL_E_BACKEND_ERROR => Error::BackendError(m),
            sys::RL_E_SHUTDOWN => Error::Shutdown(m),
            sys::RL_E_NO_MEMORY => Error::NoMemory(m),
            sys::RL_E_INTERNAL => Error::Internal(m),
            sys::RL_E_AUTH => Error::Auth(m),
            sys::RL_E_UNSUPPORTED => Error::Unsupported(m),
            other => Error::Internal(format!("unknown rl status {other}: {m}")),
        }
    }

    /// The rl_status value (`rl_sys::RL_E_*`).
    pub fn status(&self) -> i32 {
        match self {
            Error::InvalidArg(_) => sys::RL_E_INVALID_ARG,
            Error::Timeout(_) => sys::RL_E_TIMEOUT,
            Error::BackendUnavailable(_) => sys::RL_E_BACKEND_UNAVAILABLE,
            Error::BackendError(_) => sys::RL_E_BACKEND_ERROR,
            Error::Shutdown(_) => sys::RL_E_SHUTDOWN,
            Error::NoMemory(_) => sys::RL_E_NO_MEMORY,
            Error::Internal(_) => sys::RL_E_INTERNAL,
            Error::Auth(_) => sys::RL_E_AUTH,
            Error::Unsupported(_) => sys::RL_E_UNSUPPORTED,
        }
    }

    /// The core's message ("limit: expected <count>/<window> ...").
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArg(m)
            | Error::Timeout(m)
            | Error::BackendUnavailable(m)
            | Error::BackendError(m)
            | Error::Shutdown(m)
            | Error::NoMemory(m)
            | Error::Internal(m)
            | Error::Auth(m)
            | Error::Unsupported(m) => m,
        }
    }

    /// The status's name, "RL_E_INVALID_ARG" (rl_status_name).
    pub fn status_name(&self) -> &'static str {
        static_str(unsafe { sys::rl_status_name(self.status()) }).unwrap_or("RL_E_INTERNAL")
    }

    /// What the status means, in one line (rl_status_description).
    pub fn description(&self) -> &'static str {
        static_str(unsafe { sys::rl_status_description(self.status()) }).unwrap_or("")
    }

    /// True for a store outage (RL_E_BACKEND_UNAVAILABLE, RL_E_TIMEOUT): the
    /// failures `on_failure` and the circuit breaker act on, and what the
    /// tower layer answers with 503 (rl_status_is_outage).
    pub fn is_outage(&self) -> bool {
        unsafe { sys::rl_status_is_outage(self.status()) != 0 }
    }

    /// Takes an rl_error that a call handed out (may be NULL) and frees it.
    pub(crate) fn take(status: i32, err: *mut sys::rl_error) -> Error {
        let e = unsafe { Error::copy(status, err) };
        unsafe { sys::rl_error_free(err) };
        e
    }

    /// Copies an rl_error the caller does not own (a callback's).
    pub(crate) unsafe fn copy(status: i32, err: *const sys::rl_error) -> Error {
        let status = if err.is_null() { status } else { sys::rl_error_status(err) };
        let message = if err.is_null() {
            String::new()
        } else {
            CStr::from_ptr(sys::rl_error_message(err)).to_string_lossy().into_owned()
        };
        Error::from_status(status, message)
    }
}

pub(crate) fn static_str(p: *const core::ffi::c_char) -> Option<&'static str> {
    if p.is_null() {
        None
    } else {
        unsafe { CStr::from_ptr(p) }.to_str().ok()
    }
}

/// Runs an rl call that takes `rl_error **err` last and returns rl_status.
pub(crate) fn check(call: impl FnOnce(*mut *mut sys::rl_error) -> sys::rl_status) -> Result<()> {
    let mut err: *mut sys::rl_error = core::ptr::null_mut();
    let status = call(&mut err);
    if status == sys::RL_OK {
        Ok(())
    } else {
        Err(Error::take(status, err))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message().is_empty() {
            write!(f, "rl: {}", self.status_name())
        } else {
            write!(f, "rl: {}: {}", self.status_name(), self.message())
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}, {:?})", self.status_name(), self.message())
    }
}

impl std::error::Error for Error {}
