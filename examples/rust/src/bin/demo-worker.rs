//! The Rust worker of scripts/demo: hammers one key through one shared limit
//! and prints what it was admitted as one line of JSON (the protocol is in
//! examples/README.md).
//!
//!     demo-worker URL NAME LIMIT KEY ATTEMPTS
//!     demo-worker redis://127.0.0.1:6379 demo "100/1h" shared 400
//!
//! It opens its store and limiter, makes a peek (which records nothing) so
//! that its connection is up, prints "ready", and waits for the start signal
//! (a line on stdin, or its end) before its first call. Errors go to stderr
//! with exit code 1.
use std::io::BufRead;
use std::time::{SystemTime, UNIX_EPOCH};

fn now_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros()
}

fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("demo-worker: {e}");
    std::process::exit(1)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, name, limit, key, attempts] = args.as_slice() else {
        fail("usage: demo-worker URL NAME LIMIT KEY ATTEMPTS")
    };
    let attempts: u64 = attempts.parse().unwrap_or_else(|e| fail(format!("ATTEMPTS: {e}")));
    let store = rl::Store::open(url).unwrap_or_else(|e| fail(e));
    let cfg = rl::LimiterConfig::new(limit.as_str()).algorithm(rl::Algorithm::Gcra).name(name.as_str());
    let lim = store.limiter(&cfg).unwrap_or_else(|e| fail(e));
    lim.peek(key, 0).await.unwrap_or_else(|e| fail(e));
    println!("ready");
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);

    let (mut admitted, mut denied) = (0u64, 0u64);
    let (mut least, mut most) = (u128::MAX, 0u128);
    let first = now_us();
    for _ in 0..attempts {
        let d = lim.acquire(key, 1).await.unwrap_or_else(|e| fail(e));
        if d.allowed {
            admitted += 1;
        } else {
            denied += 1;
            let ms = d.retry_after.map_or(0, |r| r.as_millis());
            least = least.min(ms);
            most = most.max(ms);
        }
    }
    let last = now_us();
    let retry = if denied > 0 { format!("[{least},{most}]") } else { "[]".into() };
    println!(
        "{{\"worker\":\"rust\",\"pid\":{},\"admitted\":{admitted},\"denied\":{denied},\"first_call_us\":{first},\"last_return_us\":{last},\"retry_after_ms\":{retry}}}",
        std::process::id()
    );
}
