//! Per-call deadlines (Limiter::with_timeout, rl_request's timeout_us): on
//! memory:// nothing to cut short; on Redis (RL_TEST_REDIS_URL) a stopped
//! server (SIGSTOP, so every call stays in flight) answers each call, async
//! and blocking, with Error::Timeout at the call's deadline, long before the
//! store's own timeout_ms, and a store's circuit breaker opens after its
//! breaker_failures outages (StoreStats, node breakers). Its own test binary: stopping the server would
//! stall the tests of any other binary running beside it.
use std::time::{Duration, Instant};

use rl::{Algorithm, BreakerState, Error, Limiter, LimiterConfig, OnFailure, Request, Source, Store};

#[test]
fn memory_decides_as_ever_with_a_deadline() {
    let s = Store::open("memory://?clock=manual").unwrap();
    let lim = s.limiter(&LimiterConfig::new("2/h").algorithm(Algorithm::FixedWindow)).unwrap();
    assert_eq!(lim.timeout(), None);
    let short = lim.with_timeout(Duration::from_nanos(1));
    assert_eq!(short.timeout(), Some(Duration::from_micros(1)));
    assert_eq!(lim.with_timeout(Duration::MAX).timeout(), Some(Duration::from_micros(i64::MAX as u64)));
    assert!(short.acquire_blocking("k", 1).unwrap().allowed);
    assert_eq!(short.peek_blocking("k", 0).unwrap().remaining, 1);
    short.reset_blocking("k").unwrap();
    let ds = short.acquire_batch_blocking(&[Request::new("k", 1), Request::new("k", 1), Request::new("k", 1)]).unwrap();
    assert_eq!(ds.iter().map(|d| d.allowed).collect::<Vec<_>>(), [true, true, false]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        short.reset("k").await.unwrap();
        assert!(short.acquire("k", 1).await.unwrap().allowed);
        assert_eq!(short.refund("k", 1).await.unwrap().remaining, 2);
    });
}

/// Stops the test Redis until dropped (SIGCONT), even when the test panics.
struct Stopped(String);

impl Stopped {
    fn new() -> Stopped {
        let dir = std::env::var("RL_TEST_REDIS_DIR").expect("RL_TEST_REDIS_DIR (scripts/with-redis)");
        let pid = std::fs::read_to_string(format!("{dir}/redis.pid")).unwrap().trim().to_owned();
        signal("STOP", &pid);
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("CONT", &self.0);
    }
}

fn signal(name: &str, pid: &str) {
    let ok = std::process::Command::new("kill").args([&format!("-{name}"), pid]).status().unwrap().success();
    assert!(ok, "kill -{name} {pid}");
}

#[track_caller]
fn want_timeout<T: std::fmt::Debug>(call: &str, r: rl::Result<T>) {
    match r {
        Err(Error::Timeout(_)) => {}
        other => panic!("{call}: got {other:?}, want Error::Timeout"),
    }
}

fn every_call_times_out(lim: &Limiter, rt: &tokio::runtime::Runtime) {
    let batch = [Request::new("k", 1), Request::new("j", 1)];
    want_timeout("acquire_blocking", lim.acquire_blocking("k", 1));
    want_timeout("peek_blocking", lim.peek_blocking("k", 0));
    want_timeout("refund_blocking", lim.refund_blocking("k", 1));
    want_timeout("reset_blocking", lim.reset_blocking("k"));
    want_timeout("acquire_wait_blocking", lim.acquire_wait_blocking("k", 1, None));
    want_timeout("acquire_batch_blocking", lim.acquire_batch_blocking(&batch));
    for r in lim.acquire_batch_each_blocking(&batch).unwrap() {
        want_timeout("acquire_batch_each_blocking", r);
    }
    rt.block_on(async {
        want_timeout("acquire", lim.acquire("k", 1).await);
        want_timeout("peek", lim.peek("k", 0).await);
        want_timeout("refund", lim.refund("k", 1).await);
        want_timeout("reset", lim.reset("k").await);
        want_timeout("acquire_wait", lim.acquire_wait("k", 1, None).await);
        want_timeout("acquire_batch", lim.acquire_batch(&batch).await);
        for r in lim.acquire_batch_each(&batch).await.unwrap() {
            want_timeout("acquire_batch_each", r);
        }
    });
}

#[test]
fn redis_calls_end_at_their_deadline() {
    let Ok(url) = std::env::var("RL_TEST_REDIS_URL") else { return };
    // The store's own deadline is 60 s: only the call's can end them sooner;
    // its breaker never opens, so every call goes to the (stopped) server.
    let prefix = format!("rlrs-deadline-{}", std::process::id());
    let s = Store::open(&format!("{url}?prefix={prefix}&timeout_ms=60000&breaker_failures=0")).unwrap();
    let lim = s.limiter(&LimiterConfig::new("5/1h").algorithm(Algorithm::FixedWindow)).unwrap();
    assert!(lim.acquire_blocking("k", 1).unwrap().allowed); // connected
                                                            // A second store whose breaker opens after 2 outages (and stays open).
    let b = Store::open(&format!("{url}?prefix={prefix}&breaker_failures=2&breaker_cooldown_ms=600000")).unwrap();
    let blim = b.limiter(&LimiterConfig::new("5/1h")).unwrap().with_timeout(Duration::from_millis(50));
    assert!(blim.acquire_blocking("b", 1).unwrap().allowed);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let short = lim.with_timeout(Duration::from_millis(50));
    let start = Instant::now();
    {
        let _stopped = Stopped::new();
        every_call_times_out(&short, &rt);
        // A missed deadline is an outage: on_failure = open admits it.
        let open = s.limiter(&LimiterConfig::new("5/1h").on_failure(OnFailure::Open).name("open")).unwrap();
        let d = open.with_timeout(Duration::from_millis(50)).acquire_blocking("k", 1).unwrap();
        assert!(d.allowed && d.source == Source::FailOpen, "{d:?}");
        want_timeout("1st outage", blim.acquire_blocking("b", 1));
        want_timeout("2nd outage", blim.acquire_blocking("b", 1));
        let e = blim.acquire_blocking("b", 1).unwrap_err();
        assert!(matches!(e, Error::BackendUnavailable(_)), "breaker open: {e:?}");
    }
    let st = b.stats().unwrap();
    assert_eq!((st.breaker, st.breaker_opened), (BreakerState::Open, 1), "{st:?}");
    let nodes = b.node_breakers().unwrap();
    assert_eq!(nodes.iter().map(|n| (n.state, n.opened)).collect::<Vec<_>>(), [(BreakerState::Open, 1)]);
    // 16 calls of 50 ms each, far below one store timeout of 60 s.
    assert!(start.elapsed() < Duration::from_secs(30), "took {:?}", start.elapsed());
    // The server answers again: the deadline was per call, not the store's.
    let d = rt.block_on(short.acquire("k", 1)).unwrap();
    assert!(d.allowed || d.remaining == 0, "{d:?}");
    // One timeout counted per call that failed as a whole (6 blocking, 6
    // async); acquire_batch_each's failures are its requests', not counted.
    let st = s.stats().unwrap();
    assert_eq!(st.failures[Error::Timeout(String::new()).status() as usize], 12, "{st:?}");
}
