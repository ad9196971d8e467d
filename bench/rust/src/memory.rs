//! In process: rl's memory:// store from Rust beside governor's keyed
//! limiter (DefaultKeyedRateLimiter, a DashMap of GCRA cells), on one hot
//! key and on 100,000 keys, from 1 and 16 threads; and the binding's own
//! cost per call (time over the raw rl-sys call, allocations, crossings).
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::alloc_count;

/// The same quota for both: 100,000,000 per second (so both decide mostly
/// admissions, each a full GCRA update).
const PER_SECOND: u32 = 100_000_000;

fn keys(n: usize) -> Arc<Vec<String>> {
    Arc::new((0..n).map(|i| format!("user:{i}")).collect())
}

fn threads(n: usize, d: Duration, f: impl Fn(usize, u64) + Send + Sync + 'static) -> f64 {
    let f = Arc::new(f);
    let start = Instant::now();
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let f = f.clone();
            std::thread::spawn(move || {
                let mut calls = 0u64;
                while start.elapsed() < d {
                    for _ in 0..256 {
                        f(t, calls);
                        calls += 1;
                    }
                }
                calls
            })
        })
        .collect();
    let calls: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    calls as f64 / start.elapsed().as_secs_f64()
}

pub fn run(d: Duration) {
    for key_count in [1usize, 100_000] {
        for thread_count in [1usize, 16] {
            let ks = keys(key_count);
            let store = rl::Store::open("memory://").unwrap();
            let lim = store
                .limiter(&rl::LimiterConfig::new(format!("{PER_SECOND}/1s")).algorithm(rl::Algorithm::Gcra))
                .unwrap();
            let k = ks.clone();
            let rl_rate = threads(thread_count, d, move |t, i| {
                let key = &k[(i as usize * 7919 + t * 104729) % k.len()];
                std::hint::black_box(lim.acquire_blocking(key, 1).unwrap());
            });
            let gov: Arc<DefaultKeyedRateLimiter<String>> =
                Arc::new(RateLimiter::keyed(Quota::per_second(NonZeroU32::new(PER_SECOND).unwrap())));
            let k = ks.clone();
            let gov_rate = threads(thread_count, d, move |t, i| {
                let key = &k[(i as usize * 7919 + t * 104729) % k.len()];
                let _ = std::hint::black_box(gov.check_key(key));
            });
            for (name, rate) in [("rl memory", rl_rate), ("governor keyed", gov_rate)] {
                println!("{{\"bench\":\"rust\",\"phase\":\"memory\",\"contender\":\"{name}\",\"keys\":{key_count},\"threads\":{thread_count},\"per_second\":{rate:.0}}}");
            }
        }
    }
}

/// ns per call of `f` over `n` calls, and allocations per call.
fn per_call(n: u64, mut f: impl FnMut()) -> (f64, f64) {
    let a0 = alloc_count::count();
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    (ns, (alloc_count::count() - a0) as f64 / n as f64)
}

pub fn cost(rt: &tokio::runtime::Runtime) {
    const N: u64 = 200_000;
    let store = rl::Store::open("memory://").unwrap();
    let lim = store.limiter(&rl::LimiterConfig::new(format!("{PER_SECOND}/1s"))).unwrap();
    // The raw rl-sys call on a limiter of its own (the same settings).
    let raw = unsafe {
        let mut s = std::ptr::null_mut();
        assert_eq!(rl_sys::rl_store_open(c"memory://".as_ptr(), std::ptr::null(), &mut s, std::ptr::null_mut()), 0);
        let cfg = rl_sys::rl_config_new();
        let limit = std::ffi::CString::new(format!("{PER_SECOND}/1s")).unwrap();
        rl_sys::rl_config_set(cfg, c"limit".as_ptr(), limit.as_ptr(), std::ptr::null_mut());
        let mut l = std::ptr::null_mut();
        assert_eq!(rl_sys::rl_limiter_new(s, cfg, &mut l, std::ptr::null_mut()), 0);
        rl_sys::rl_config_free(cfg);
        (s, l)
    };
    let key = b"user:42";
    let (sys_ns, sys_allocs) = per_call(N, || unsafe {
        let mut req = std::mem::zeroed::<rl_sys::rl_request>();
        rl_sys::rl_request_init(&mut req, rl_sys::RL_REQUEST_VERSION, std::ptr::null_mut());
        req.key = key.as_ptr().cast();
        req.key_len = key.len();
        req.cost = 1;
        let mut d = std::mem::zeroed::<rl_sys::rl_decision>();
        d.version = rl_sys::RL_DECISION_VERSION;
        rl_sys::rl_limiter_acquire(raw.1, &req, &mut d, std::ptr::null_mut());
        std::hint::black_box(d);
    });
    let (blocking_ns, blocking_allocs) = per_call(N, || {
        std::hint::black_box(lim.acquire_blocking(key, 1).unwrap());
    });
    let (async_ns, async_allocs) = per_call(N, || {
        std::hint::black_box(rt.block_on(lim.acquire(key, 1)).unwrap());
    });
    unsafe {
        rl_sys::rl_limiter_free(raw.1);
        rl_sys::rl_store_free(raw.0);
    }
    println!(
        "{{\"bench\":\"rust\",\"phase\":\"cost\",\"store\":\"memory\",\"sys_ns_per_call\":{sys_ns:.1},\"sys_allocs_per_call\":{sys_allocs:.2},\"blocking_ns_per_call\":{blocking_ns:.1},\"blocking_allocs_per_call\":{blocking_allocs:.2},\"async_ns_per_call\":{async_ns:.1},\"async_allocs_per_call\":{async_allocs:.2},\"crossings_per_call\":1}}"
    );
}
