//! Exactness beside trypema: 4 processes x 16 tasks on one key, offering 10x
//! the limit for several windows; the most admitted in any window of the
//! limit's length, from the admission times (each call's start, wall clock,
//! comparable across the processes of one machine).
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::contenders::{open_with, unique};
use crate::redis_cpu::Admin;

const PROCESSES: usize = 4;
const TASKS: usize = 16;
const RATE: f64 = 50.0; // per second: 100 per 2 s window
const WINDOW_S: u64 = 2;
const OFFERED: f64 = 10.0 * RATE; // over all tasks of all processes

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

/// exact-worker URL CONTENDER KEY START_US SECONDS: prints its admission times.
pub async fn worker(args: &[String]) {
    let [url, name, key, start_us, seconds] = args else { panic!("exact-worker URL CONTENDER KEY START_US SECONDS") };
    let admin = Admin::new(url).await;
    let c = Arc::new(open_with(name, url, &admin, RATE, WINDOW_S, key));
    let start: u64 = start_us.parse().unwrap();
    let end = start + (seconds.parse::<f64>().unwrap() * 1e6) as u64;
    let every = Duration::from_secs_f64((PROCESSES * TASKS) as f64 / OFFERED);
    let wait = start.saturating_sub(now_us());
    tokio::time::sleep(Duration::from_micros(wait)).await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| {
            let (c, key) = (c.clone(), key.clone());
            tokio::spawn(async move {
                let rkey = trypema::redis::RedisKey::try_from(key.clone()).unwrap();
                let tkey = rl::trypema::RedisKey::try_from(key.clone()).unwrap();
                // Tasks spread over the pacing interval, not in step.
                tokio::time::sleep(every.mul_f64(i as f64 / TASKS as f64)).await;
                let mut tick = tokio::time::interval(every);
                let mut admitted = Vec::new();
                while now_us() < end {
                    tick.tick().await;
                    let t = now_us();
                    if c.decide(&key, &rkey, &tkey).await {
                        admitted.push((t, now_us()));
                    }
                }
                admitted
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    println!("{}", all.iter().map(|(s, e)| format!("{s}:{e}")).collect::<Vec<_>>().join(" "));
}

/// The most calls (start, return), sorted by start, that lie wholly in any
/// window of `window_us` (a window starting at a call's start is enough).
fn most_in_window(calls: &[(u64, u64)], window_us: u64) -> usize {
    (0..calls.len())
        .map(|i| {
            let end = calls[i].0 + window_us;
            calls[i..].iter().take_while(|c| c.0 < end).filter(|c| c.1 < end).count()
        })
        .max()
        .unwrap_or(0)
}

pub async fn run(url: &str, windows: u64) {
    let me = std::env::current_exe().unwrap();
    let seconds = (windows * WINDOW_S) as f64;
    for name in ["rl sliding_log", "rl::trypema absolute", "trypema absolute"] {
        let key = unique("exact");
        let start = now_us() + 1_500_000; // every process connected by then
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                Command::new(&me)
                    .args(["exact-worker", url, name, &key, &start.to_string(), &seconds.to_string()])
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut times = Vec::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "exact-worker failed");
            times.extend(String::from_utf8(out.stdout).unwrap().split_whitespace().map(|t| {
                let (s, e) = t.split_once(':').unwrap();
                (s.parse::<u64>().unwrap(), e.parse::<u64>().unwrap())
            }));
        }
        times.sort_unstable();
        let most = most_in_window(&times, WINDOW_S * 1_000_000);
        let limit = (RATE * WINDOW_S as f64) as u64;
        println!(
            "{{\"bench\":\"rust\",\"phase\":\"exactness\",\"contender\":\"{name}\",\"processes\":{PROCESSES},\"tasks\":{TASKS},\"limit\":{limit},\"window_s\":{WINDOW_S},\"offered_per_second\":{OFFERED},\"admitted\":{},\"max_in_window\":{most}}}",
            times.len()
        );
    }
}
