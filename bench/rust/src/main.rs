//! The Rust benches (bench/run runs them; bench/README.md says how each
//! figure is measured). One JSON line per measurement, `"bench":"rust"`:
//!
//!   rl-bench-rust redis URL [SECONDS]      16 tasks x 10 keys and 64 calls in
//!                                          flight on one key: rl vs trypema's
//!                                          absolute and suppressed strategies
//!   rl-bench-rust exactness URL [WINDOWS]  4 processes x 16 tasks on one key
//!                                          at 10x the limit: the most admitted
//!                                          in any window, rl vs trypema
//!   rl-bench-rust memory [SECONDS]         rl memory:// vs governor's keyed
//!                                          limiter, 1 hot key and 100,000 keys,
//!                                          1 and 16 threads
//!   rl-bench-rust cost                     the binding's own cost per call
mod alloc_count;
mod contenders;
mod exactness;
mod memory;
mod redis_cpu;

use std::time::Duration;

#[global_allocator]
static ALLOC: alloc_count::Counting = alloc_count::Counting;

fn seconds(arg: Option<&String>, default: f64) -> Duration {
    Duration::from_secs_f64(arg.map_or(default, |s| s.parse().expect("SECONDS: a number")))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    match args.first().map(String::as_str) {
        Some("redis") => rt.block_on(contenders::run(&args[1], seconds(args.get(2), 2.0))),
        Some("exactness") => rt.block_on(exactness::run(&args[1], args.get(2).map_or(3, |w| w.parse().unwrap()))),
        Some("exact-worker") => rt.block_on(exactness::worker(&args[1..])),
        Some("memory") => memory::run(seconds(args.get(1), 1.0)),
        Some("cost") => memory::cost(&rt),
        _ => {
            eprintln!("usage: rl-bench-rust redis URL [SECONDS] | exactness URL [WINDOWS] | memory [SECONDS] | cost");
            std::process::exit(2);
        }
    }
}
