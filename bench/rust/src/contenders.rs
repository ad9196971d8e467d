//! rl beside trypema 2.2.1's Redis provider on one redis-server: 16 tasks on
//! 10 keys (trypema's own bench shape) and 64 calls in flight on one key;
//! decisions/s, p50/p99 latency and Redis CPU per decision.
use std::sync::Arc;
use std::time::{Duration, Instant};

use trypema::redis::{RedisKey, RedisRateLimiterProvider};
use trypema::{BucketSize, HardLimitFactor, RateLimit, RateLimitDecision, RateLimiterBuilder, WindowSize};

use crate::redis_cpu::Admin;

/// The limit every contender enforces: 1,000/s over a 10 s window per key
/// (trypema: rate 1,000/s, window 10 s; rl: "10000/10s").
pub const RATE: f64 = 1000.0;
pub const WINDOW_S: u64 = 10;

pub enum Contender {
    Rl(rl::Limiter),
    RlTrypema(Arc<rl::trypema::RateLimiter>, bool, f64),
    Trypema(Arc<RedisRateLimiterProvider>, bool, f64),
}

impl Contender {
    pub async fn decide(&self, key: &str, rkey: &RedisKey, tkey: &rl::trypema::RedisKey) -> bool {
        match self {
            Contender::Rl(l) => l.acquire(key, 1).await.expect("rl decides").allowed,
            Contender::RlTrypema(t, suppressed, rate) => {
                let rate = rl::trypema::RateLimit::try_from(*rate).unwrap();
                let d = if *suppressed {
                    t.redis().suppressed().inc(tkey, &rate, 1).await
                } else {
                    t.redis().absolute().inc(tkey, &rate, 1).await
                };
                matches!(
                    d.expect("rl decides"),
                    rl::trypema::RateLimitDecision::Allowed
                        | rl::trypema::RateLimitDecision::Suppressed { is_allowed: true, .. }
                )
            }
            Contender::Trypema(p, suppressed, rate) => {
                let rate = RateLimit::per_second(*rate).unwrap();
                let d = if *suppressed {
                    p.suppressed().inc(rkey, &rate, 1).await
                } else {
                    p.absolute().inc(rkey, &rate, 1).await
                };
                matches!(
                    d.expect("trypema decides"),
                    RateLimitDecision::Allowed | RateLimitDecision::Suppressed { is_allowed: true, .. }
                )
            }
        }
    }
}

pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{prefix}{nanos}")
}

/// Every contender, by name, over a store or connection of its own.
pub async fn open(name: &str, url: &str, admin: &Admin) -> Contender {
    open_with(name, url, admin, RATE, WINDOW_S, &unique("rlbench"))
}

/// A contender enforcing `rate`/s over a `window_s` window per key.
/// Contenders opened with the same `prefix` (processes of one run) share state.
pub fn open_with(name: &str, url: &str, admin: &Admin, rate: f64, window_s: u64, prefix: &str) -> Contender {
    let sep = if url.contains('?') { '&' } else { '?' };
    let store = || rl::Store::open(&format!("{url}{sep}prefix={prefix}-")).expect("rl opens");
    let limit = format!("{}/{window_s}s", (rate * window_s as f64) as u64);
    match name {
        "rl sliding_window" | "rl sliding_log" | "rl suppressed" => {
            let algorithm = match name {
                "rl sliding_window" => rl::Algorithm::SlidingWindow,
                "rl sliding_log" => rl::Algorithm::SlidingLog,
                _ => rl::Algorithm::Suppressed,
            };
            Contender::Rl(store().limiter(&rl::LimiterConfig::new(limit).algorithm(algorithm).name("bench")).unwrap())
        }
        "rl::trypema absolute" | "rl::trypema suppressed" => {
            use rl::trypema::*;
            let opts = |store| RedisRateLimiterOptions {
                store,
                prefix: None,
                window_size_seconds: WindowSizeSeconds::try_from(window_s).unwrap(),
                rate_group_size_ms: RateGroupSizeMs::try_from(10).unwrap(),
                hard_limit_factor: HardLimitFactor::default(),
            };
            let local = LocalRateLimiterOptions {
                window_size_seconds: WindowSizeSeconds::try_from(window_s).unwrap(),
                rate_group_size_ms: RateGroupSizeMs::try_from(10).unwrap(),
                hard_limit_factor: HardLimitFactor::default(),
            };
            let t = RateLimiter::new(RateLimiterOptions { local, redis: opts(store()) });
            Contender::RlTrypema(Arc::new(t), name.ends_with("suppressed"), rate)
        }
        _ => {
            let p = RedisRateLimiterProvider::builder(admin.connection())
                .prefix(RedisKey::try_from(prefix.to_owned()).unwrap())
                .window_size(WindowSize::seconds(window_s).unwrap())
                .bucket_size(BucketSize::milliseconds(10).unwrap())
                .hard_limit_factor(HardLimitFactor::new(1.0).unwrap())
                .cleanup_enabled(false)
                .build()
                .expect("trypema builds");
            Contender::Trypema(p, name.ends_with("suppressed"), rate)
        }
    }
}

pub const CONTENDERS: [&str; 6] = [
    "rl sliding_window",
    "rl::trypema absolute",
    "trypema absolute",
    "rl suppressed",
    "rl::trypema suppressed",
    "trypema suppressed",
];

fn quantile(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        0
    } else {
        sorted[((sorted.len() - 1) as f64 * q) as usize]
    }
}

/// `tasks` tasks, task i on key i % keys, for `d`: decisions/s, latency
/// quantiles (µs) and Redis CPU per decision.
async fn phase(c: Arc<Contender>, admin: &mut Admin, tasks: usize, keys: usize, d: Duration) -> (f64, u32, u32, f64) {
    admin.reset().await;
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move {
                let key = format!("key{}", i % keys);
                let rkey = RedisKey::try_from(key.clone()).unwrap();
                let tkey = rl::trypema::RedisKey::try_from(key.clone()).unwrap();
                let mut lat = Vec::new();
                while start.elapsed() < d {
                    let t = Instant::now();
                    c.decide(&key, &rkey, &tkey).await;
                    lat.push(t.elapsed().as_micros() as u32);
                }
                lat
            })
        })
        .collect();
    let mut lat = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let elapsed = start.elapsed().as_secs_f64();
    let usec = admin.usec().await;
    lat.sort_unstable();
    let n = lat.len() as f64;
    (n / elapsed, quantile(&lat, 0.5), quantile(&lat, 0.99), usec / n)
}

pub async fn run(url: &str, d: Duration) {
    let mut admin = Admin::new(url).await;
    for (phase_name, tasks, keys) in [("tasks", 16, 10), ("inflight", 64, 1)] {
        for name in CONTENDERS {
            let c = Arc::new(open(name, url, &admin).await);
            // A warm-up: connections made, scripts loaded.
            phase(c.clone(), &mut admin, tasks, keys, Duration::from_millis(100)).await;
            let (per_second, p50, p99, redis_us) = phase(c, &mut admin, tasks, keys, d).await;
            println!(
                "{{\"bench\":\"rust\",\"phase\":\"{phase_name}\",\"contender\":\"{name}\",\"tasks\":{tasks},\"keys\":{keys},\"per_second\":{per_second:.0},\"p50_us\":{p50},\"p99_us\":{p99},\"redis_us_per_decision\":{redis_us:.3}}}"
            );
        }
    }
}
