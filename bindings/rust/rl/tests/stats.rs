//! Store statistics (rl_store_get_stats) and node breakers
//! (rl_store_get_node_breakers) on memory:// and (RL_TEST_REDIS_URL) Redis.
use rl::{Algorithm, BreakerState, LimiterConfig, Source, Store, Verdicts};

/// 5 admitted then 2 denied by the store on a fresh key.
fn five_then_two(store: &Store, name: &str) {
    let lim = store.limiter(&LimiterConfig::new("5/1h").algorithm(Algorithm::FixedWindow).name(name)).unwrap();
    let allowed: Vec<bool> = (0..7).map(|_| lim.acquire_blocking("k", 1).unwrap().allowed).collect();
    assert_eq!(allowed, [true, true, true, true, true, false, false]);
}

#[test]
fn memory_stats_count_each_decision_and_it_has_no_breakers() {
    let s = Store::open("memory://?clock=manual").unwrap();
    five_then_two(&s, "stats");
    let st = s.stats().unwrap();
    assert_eq!(st.decisions(Source::Store), Verdicts { allowed: 5, denied: 2 });
    assert_eq!(st.decisions(Source::FailOpen), Verdicts::default());
    assert_eq!(st.decisions(Source::Other(99)), Verdicts::default());
    assert_eq!(st.total(), Verdicts { allowed: 5, denied: 2 });
    assert_eq!((st.breaker, st.breaker_opened, st.round_trips), (BreakerState::Closed, 0, 0));
    assert!(st.healthy() && st.failures.iter().all(|&n| n == 0));
    assert!(s.node_breakers().unwrap().is_empty());
    assert_eq!(
        [BreakerState::Closed, BreakerState::Open, BreakerState::HalfOpen, BreakerState::Other(7)]
            .map(|b| b.to_string()),
        ["closed", "open", "half_open", "state_7"]
    );
    s.close(); // both still work after close (rl.h)
    assert_eq!(s.stats().unwrap().total(), Verdicts { allowed: 5, denied: 2 });
    assert!(s.node_breakers().unwrap().is_empty());
}

#[test]
fn redis_stats_count_round_trips_and_name_the_node() {
    let Ok(url) = std::env::var("RL_TEST_REDIS_URL") else { return };
    let prefix = format!("rlrs-stats-{}", std::process::id());
    let s = Store::open(&format!("{url}?prefix={prefix}")).unwrap();
    five_then_two(&s, "stats");
    let st = s.stats().unwrap();
    assert_eq!(st.decisions(Source::Store), Verdicts { allowed: 5, denied: 2 });
    assert!(st.round_trips >= 7, "{st:?}");
    assert!(st.round_trip_p50 <= st.round_trip_p99 && st.round_trip_p99 <= st.round_trip_max, "{st:?}");
    assert!(st.healthy());
    let port = url.rsplit(':').next().unwrap();
    let breakers = s.node_breakers().unwrap();
    assert_eq!(breakers.len(), 1, "{breakers:?}");
    assert_eq!(breakers[0].node, format!("127.0.0.1:{port}"));
    assert_eq!((breakers[0].state, breakers[0].opened), (BreakerState::Closed, 0));
}

#[test]
fn an_unreachable_redis_counts_its_failures_by_status() {
    // Port 1 refuses at once: each call is an outage, counted by its status.
    let s = Store::open("redis://127.0.0.1:1?timeout_ms=200").unwrap();
    let lim = s.limiter(&LimiterConfig::new("5/1h")).unwrap();
    let e = lim.acquire_blocking("k", 1).unwrap_err();
    assert!(e.is_outage(), "{e:?}");
    let st = s.stats().unwrap();
    assert_eq!(st.failures[e.status() as usize], 1, "{st:?}");
    assert_eq!(st.failures.iter().sum::<u64>(), 1, "{st:?}");
    assert_eq!(st.total(), Verdicts::default());
    let breakers = s.node_breakers().unwrap();
    assert_eq!(breakers.iter().map(|b| b.node.as_str()).collect::<Vec<_>>(), ["127.0.0.1:1"]);
}

#[test]
fn memory_stats_count_the_leases_of_every_limiter() {
    let s = Store::open("memory://?clock=manual").unwrap();
    let cfg = LimiterConfig::new("10/s")
        .algorithm(Algorithm::FixedWindow)
        .setting("lease", "auto")
        .setting("lease_threshold", "20")
        .setting("lease_share", "1/2");
    let (one, two) = (s.limiter(&cfg).unwrap(), s.limiter(&cfg).unwrap());
    let mut allowed = 0u64;
    for lim in std::iter::repeat(&one).take(12).chain(std::iter::repeat(&two).take(3)) {
        allowed += u64::from(lim.acquire_blocking("k", 1).unwrap().allowed);
    }
    assert!(allowed <= 10, "{allowed} allowed");
    let st = s.stats().unwrap();
    let l = st.leases;
    assert!(l.taken >= 1 && l.units_leased >= l.taken, "{l:?}");
    assert!(l.decisions >= 1 && l.decisions <= l.units_leased, "{l:?}");
    assert!(l.units_returned <= l.units_unused, "{l:?}");
    assert_eq!(st.decisions(Source::Store).allowed, allowed, "a decision from a slice is the store's");
    let metrics = s.metrics().unwrap();
    assert!(metrics.contains(&format!("\nrl_lease_taken_total {}\n", l.taken)), "{metrics}");

    let plain = Store::open("memory://").unwrap();
    plain.limiter(&LimiterConfig::new("5/s")).unwrap().acquire_blocking("k", 1).unwrap();
    assert_eq!(plain.stats().unwrap().leases, rl::LeaseStats::default());
}
