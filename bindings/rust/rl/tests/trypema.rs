//! The trypema-shaped module: its types' rules and errors, and rl's exact
//! decisions behind inc and is_allowed, on memory:// and (RL_TEST_REDIS_URL) Redis.
use std::time::Duration;

use rl::trypema::*;
use rl::Store;

fn limiter(store: Store, window: u64, hard: f64) -> RateLimiter {
    RateLimiter::new(RateLimiterOptions {
        local: LocalRateLimiterOptions {
            window_size_seconds: WindowSizeSeconds::try_from(window).unwrap(),
            rate_group_size_ms: RateGroupSizeMs::try_from(10).unwrap(),
            hard_limit_factor: HardLimitFactor::default(),
        },
        redis: RedisRateLimiterOptions {
            store,
            prefix: None,
            window_size_seconds: WindowSizeSeconds::try_from(window).unwrap(),
            rate_group_size_ms: RateGroupSizeMs::try_from(10).unwrap(),
            hard_limit_factor: HardLimitFactor::try_from(hard).unwrap(),
        },
    })
}

fn stores() -> Vec<Store> {
    let mut out = vec![Store::open("memory://?clock=manual").unwrap()];
    if let Ok(url) = std::env::var("RL_TEST_REDIS_URL") {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        out.push(Store::open(&format!("{url}?clock=manual&prefix=rltrypema-{nanos}-")).unwrap());
    }
    out
}

#[test]
fn keys_and_values_follow_trypemas_rules() {
    assert!(RedisKey::try_from("user_123".to_string()).is_ok());
    for (bad, why) in [("", "empty"), ("user:123", "colons")] {
        match RedisKey::try_from(bad) {
            Err(TrypemaError::InvalidRedisKey(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert!(matches!(RedisKey::try_from("x".repeat(256)), Err(TrypemaError::InvalidRedisKey(_))));
    assert!(RedisKey::try_from("x".repeat(255)).is_ok());
    assert!(matches!(RateLimit::try_from(0.0), Err(TrypemaError::InvalidRateLimit(_))));
    assert!(matches!(RateLimit::try_from(f64::NAN), Err(TrypemaError::InvalidRateLimit(_))));
    assert!(matches!(WindowSizeSeconds::try_from(0), Err(TrypemaError::InvalidWindowSize(_))));
    assert!(matches!(RateGroupSizeMs::try_from(0), Err(TrypemaError::InvalidBucketSize(_))));
    assert!(matches!(HardLimitFactor::try_from(0.99), Err(TrypemaError::InvalidHardLimitFactor(_))));
    assert_eq!(HardLimitFactor::default().as_multiplier(), 1.0);
    assert_eq!(RedisKey::default_prefix().as_str(), "trypema");
}

#[tokio::test]
async fn absolute_admits_exactly_the_window_capacity() {
    for store in stores() {
        let rl = limiter(store.clone(), 5, 1.0);
        let key = RedisKey::try_from("user_123").unwrap();
        let rate = RateLimit::try_from(1.0).unwrap(); // 5 per 5 s window
        assert_eq!(rl.redis().absolute().is_allowed(&key).await.unwrap(), RateLimitDecision::Allowed);
        for _ in 0..5 {
            assert_eq!(rl.redis().absolute().inc(&key, &rate, 1).await.unwrap(), RateLimitDecision::Allowed);
        }
        let d = rl.redis().absolute().inc(&key, &rate, 1).await.unwrap();
        match d {
            RateLimitDecision::Rejected { window_size_seconds, retry_after_ms, remaining_after_waiting, .. } => {
                assert_eq!(window_size_seconds, 5);
                assert_eq!(retry_after_ms, 5000, "the first admission leaves the window in 5 s");
                assert_eq!(remaining_after_waiting, 1);
            }
            other => panic!("{store}: {other:?}"),
        }
        assert!(matches!(rl.redis().absolute().is_allowed(&key).await.unwrap(), RateLimitDecision::Rejected { .. }));
        store.advance_clock(Duration::from_secs(5)).unwrap();
        assert_eq!(rl.redis().absolute().is_allowed(&key).await.unwrap(), RateLimitDecision::Allowed);
        assert_eq!(rl.redis().absolute().inc(&key, &rate, 1).await.unwrap(), RateLimitDecision::Allowed);
        // A count above the capacity can never be admitted.
        let big = rl.redis().absolute().inc(&RedisKey::try_from("big").unwrap(), &rate, 6).await.unwrap();
        assert!(matches!(big, RateLimitDecision::Rejected { retry_after_ms: u64::MAX, .. }), "{big:?}");
        // A capacity below one request is refused.
        let tiny = rl.redis().absolute().inc(&key, &RateLimit::try_from(0.1).unwrap(), 1).await;
        assert!(matches!(tiny, Err(TrypemaError::InvalidRateLimit(_))), "{tiny:?}");
    }
}

#[tokio::test]
async fn suppressed_allows_below_the_limit_and_never_admits_past_the_hard_limit() {
    for store in stores() {
        let rl = limiter(store.clone(), 1, 2.0);
        let key = RedisKey::try_from("hot").unwrap();
        let rate = RateLimit::try_from(10.0).unwrap();
        let s = rl.redis().suppressed();
        let mut admitted = 0;
        let mut seen = (0, 0, 0);
        for i in 0..100 {
            let d = s.inc(&key, &rate, 1).await.unwrap();
            match d {
                RateLimitDecision::Allowed => {
                    admitted += 1;
                    seen.0 += 1;
                    assert!(i < 20);
                }
                RateLimitDecision::Suppressed { suppression_factor, is_allowed, .. } => {
                    assert!(suppression_factor > 0.0 && suppression_factor < 1.0);
                    admitted += is_allowed as i32;
                    seen.1 += 1;
                }
                RateLimitDecision::Rejected { window_size_seconds, .. } => {
                    assert_eq!(window_size_seconds, 1);
                    seen.2 += 1;
                }
            }
        }
        assert!(seen.0 >= 10, "{store}: the first 10 are below the limit: {seen:?}");
        assert!(admitted <= 20, "{store}: admitted {admitted} past the hard limit 20");
        assert!(s.get_suppression_factor(&key).await.unwrap() > 0.0);
    }
}

#[tokio::test]
async fn an_outage_is_rls_error() {
    let rl = limiter(Store::open("redis://127.0.0.1:1?timeout_ms=100").unwrap(), 1, 1.0);
    let e = rl.redis().absolute().inc(&RedisKey::try_from("k").unwrap(), &RateLimit::try_from(5.0).unwrap(), 1).await;
    match e {
        Err(TrypemaError::Rl(e)) => assert!(e.is_outage(), "{e}"),
        other => panic!("{other:?}"),
    }
    // The local provider is memory://: it decides.
    let d = rl.local().absolute().inc(&RedisKey::try_from("k").unwrap(), &RateLimit::try_from(5.0).unwrap(), 1).await;
    assert_eq!(d.unwrap(), RateLimitDecision::Allowed);
}
