//! The quick start through rl-sys alone: a "5/1m" GCRA limiter named "api"
//! on the store of the URL given (memory:// by default), seven acquires of
//! "user:42", each printed as `allowed` or `denied`. Plain Rust 2021 with no
//! dependency but rl-sys, so that scripts/test-arm64 builds it for aarch64
//! with Debian's rustc and its aarch64 standard library (no cargo, no
//! crates.io): what is verified on arm64 of the Rust binding.
use rl_sys::*;
use std::ffi::{CStr, CString};
use std::process::exit;
use std::ptr::null_mut;

/// The core's message for a failed call, and exit 1.
fn check(status: rl_status, err: *mut rl_error, what: &str) {
    if status == RL_OK {
        return;
    }
    let message = if err.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: err came from the failed call; rl_error_message is valid
        // until rl_error_free.
        let m = unsafe { CStr::from_ptr(rl_error_message(err)) }.to_string_lossy().into_owned();
        unsafe { rl_error_free(err) };
        m
    };
    eprintln!("decide: {what}: status {status}: {message}");
    exit(1);
}

fn main() {
    let url = std::env::args().nth(1).unwrap_or_else(|| "memory://".into());
    let url = CString::new(url).unwrap_or_else(|_| {
        eprintln!("decide: the URL holds a NUL");
        exit(2)
    });
    let mut err: *mut rl_error = null_mut();
    let mut store: *mut rl_store = null_mut();
    // SAFETY: every pointer passed below is valid for the call; the handles
    // are freed once, at the end.
    unsafe {
        check(rl_store_open(url.as_ptr(), std::ptr::null(), &mut store, &mut err), err, "rl_store_open");
        let cfg = rl_config_new();
        for (key, value) in [("limit", "5/1m"), ("algorithm", "gcra"), ("name", "api")] {
            let (k, v) = (CString::new(key).unwrap(), CString::new(value).unwrap());
            check(rl_config_set(cfg, k.as_ptr(), v.as_ptr(), &mut err), err, "rl_config_set");
        }
        let mut limiter: *mut rl_limiter = null_mut();
        check(rl_limiter_new(store, cfg, &mut limiter, &mut err), err, "rl_limiter_new");
        rl_config_free(cfg);

        let key = "user:42";
        let mut request: rl_request = std::mem::zeroed();
        check(rl_request_init(&mut request, RL_REQUEST_VERSION, &mut err), err, "rl_request_init");
        request.key = key.as_ptr().cast();
        request.key_len = key.len();
        request.cost = 1;
        for _ in 0..7 {
            let mut d: rl_decision = std::mem::zeroed();
            check(rl_decision_init(&mut d, RL_DECISION_VERSION, &mut err), err, "rl_decision_init");
            check(rl_limiter_acquire(limiter, &request, &mut d, &mut err), err, "rl_limiter_acquire");
            if d.allowed != 0 {
                println!("allowed, remaining {}", d.remaining);
            } else {
                println!("denied, retry after {} us", d.retry_after_us);
            }
        }
        rl_limiter_free(limiter);
        rl_store_close(store);
        rl_store_free(store);
    }
}
