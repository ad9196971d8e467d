//! The conformance suite (conformance/*.yaml, conformance/README.md) through
//! the Rust surfaces: every case on memory:// and, when RL_TEST_REDIS_URL is
//! set (scripts/with-redis), on Redis and (RL_TEST_CLUSTER_URL) Redis Cluster, through the async calls and through
//! the blocking ones. One line per case, then "N passed, N failed".
mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use common::schema::Schema;
use common::yaml::{self, Node};
use rl::{Decision, Error, Limiter, LimiterConfig, Store};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Async,
    Blocking,
}

struct Runner {
    schema: Schema,
    rt: tokio::runtime::Runtime,
}

fn int(n: &Node, what: &str) -> Result<i64, String> {
    n.text().parse().map_err(|_| format!("bad case: {what}: '{}' is not an int64", n.text()))
}

fn check_error(
    at: &str,
    got: Result<(), &Error>,
    want_status: Option<&str>,
    want_message: Option<&str>,
) -> Result<(), String> {
    match (want_status, got) {
        (None, Ok(())) => Ok(()),
        (None, Err(e)) => Err(format!("{at}: unexpected error {e}")),
        (Some(want), Ok(())) => Err(format!("{at}: succeeded, want error {want}")),
        (Some(want), Err(e)) => {
            if e.status_name() != want {
                return Err(format!("{at}: got {e}, want {want}"));
            }
            let m = want_message.unwrap_or("");
            if !e.message().contains(m) {
                return Err(format!("{at}: message {:?} does not contain {m:?}", e.message()));
            }
            Ok(())
        }
    }
}

fn key_of(request: &Node) -> Result<Vec<u8>, String> {
    if let Some(h) = request.str("key_hex") {
        return (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).map_err(|e| format!("key_hex: {e}")))
            .collect();
    }
    if let Some(n) = request.get("key_len") {
        return Ok(vec![b'x'; int(n, "key_len")?.max(0) as usize]);
    }
    Ok(request.str("key").unwrap_or("").as_bytes().to_vec())
}

fn compare(schema: &Schema, expect: Option<&Node>, d: &Decision, at: &str) -> Result<(), String> {
    let Some(expect) = expect else { return Ok(()) };
    let mut diffs = Vec::new();
    for (field, n) in expect.entries() {
        let ty = &schema.records["decision"].field(field).unwrap().ty;
        let (got, want) = match ty.as_str() {
            "bool" => (d.allowed.to_string(), n.text().to_owned()),
            "number" => (
                d.suppression_factor.to_string(),
                n.text().parse::<f64>().map_err(|_| format!("bad case: {field}"))?.to_string(),
            ),
            _ => {
                let got = match field.as_str() {
                    "limit" => d.limit,
                    "remaining" => d.remaining,
                    "retry_after_us" => d.retry_after_us(),
                    "reset_after_us" => d.reset_after_us(),
                    "limit_index" => d.limit_index as i64,
                    other => return Err(format!("bad case: no decision field {other}")),
                };
                (got.to_string(), int(n, field)?.to_string())
            }
        };
        if got != want {
            diffs.push(format!("{field} = {got}, want {want}"));
        }
    }
    diffs.sort();
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!("{at}: {}", diffs.join(", ")))
    }
}

impl Runner {
    fn decide(&self, mode: Mode, lim: &Limiter, verb: &str, key: &[u8], cost: i64) -> Result<Option<Decision>, Error> {
        match mode {
            Mode::Blocking => match verb {
                "acquire" => lim.acquire_blocking(key, cost).map(Some),
                "peek" => lim.peek_blocking(key, cost).map(Some),
                "refund" => lim.refund_blocking(key, cost).map(Some),
                _ => lim.reset_blocking(key).map(|()| None),
            },
            Mode::Async => self.rt.block_on(async {
                match verb {
                    "acquire" => lim.acquire(key, cost).await.map(Some),
                    "peek" => lim.peek(key, cost).await.map(Some),
                    "refund" => lim.refund(key, cost).await.map(Some),
                    _ => lim.reset(key).await.map(|()| None),
                }
            }),
        }
    }

    fn run_step(&self, mode: Mode, store: &Store, lim: &Limiter, s: &Node) -> Result<(), String> {
        let verb = self.schema.verb_of(s);
        let (want_status, want_message) = (s.str("error"), s.str("message_contains"));
        if verb == "advance" {
            let r = store.advance_clock_us(int(s.get("advance").unwrap(), "advance")?);
            return check_error("advance", r.as_ref().map(|_| ()), want_status, want_message);
        }
        if verb == "stats" {
            return compare_stats(store, s.get("stats").unwrap());
        }
        let request = s.get(verb).unwrap();
        let key = key_of(request)?;
        let cost = match request.get("cost") {
            Some(c) => int(c, "cost")?,
            None => 0,
        };
        let repeat = int(s.get("repeat").unwrap(), "repeat")?;
        let mut allowed = 0;
        for r in 1..=repeat {
            let at = format!("{verb} ({r} of {repeat})");
            let d = self.decide(mode, lim, verb, &key, cost);
            check_error(&at, d.as_ref().map(|_| ()), want_status, want_message)?;
            let Ok(Some(d)) = d else { return Ok(()) };
            if d.allowed {
                allowed += 1;
            }
            compare(&self.schema, s.get("each"), &d, &at)?;
            if r == repeat {
                compare(&self.schema, s.get("expect"), &d, &at)?;
            }
        }
        if let Some(n) = s.get("allowed_count") {
            if int(n, "allowed_count")? != allowed {
                return Err(format!("{verb}: allowed_count = {allowed}, want {}", n.text()));
            }
        }
        Ok(())
    }

    fn run_case(&self, mode: Mode, case: &mut Node, url: &str) -> Result<(), String> {
        self.schema.check(case, "case", "case").map_err(|e| format!("bad case: {e}"))?;
        let store = Store::open(url).map_err(|e| format!("open {url}: {e}"))?;
        store.set_clock(int(case.get("clock").unwrap(), "clock")?).map_err(|e| format!("clock: {e}"))?;
        let mut cfg = LimiterConfig::default();
        for (k, v) in case.get("limiter").unwrap().entries() {
            cfg = cfg.setting(k.clone(), v.text());
        }
        let processes = int(case.get("processes").unwrap(), "processes")?;
        if !(1..=64).contains(&processes) {
            return Err(format!("bad case: processes: {processes} is not 1 to 64"));
        }
        // One limiter per process of the case, each its own (its own leases).
        let mut lims = Vec::new();
        for _ in 0..processes {
            let lim = store.limiter(&cfg);
            if case.get("error").is_some() || lim.is_err() {
                check_error("limiter", lim.as_ref().map(|_| ()), case.str("error"), case.str("message_contains"))?;
                if lim.is_err() {
                    return Ok(());
                }
            }
            lims.push(lim.unwrap());
        }
        for (i, step) in case.get("steps").map(Node::items).unwrap_or(&[]).iter().enumerate() {
            let process = int(step.get("process").unwrap(), "process")?;
            let Some(lim) = usize::try_from(process).ok().and_then(|p| lims.get(p)) else {
                return Err(format!(
                    "bad case: step {}.process: {process} is not below processes ({processes})",
                    i + 1
                ));
            };
            self.run_step(mode, &store, lim, step).map_err(|e| format!("step {}: {e}", i + 1))?;
        }
        store.close();
        Ok(())
    }
}

/// The store's lease counters (`StoreStats::leases`) against `want`, by the
/// format's names.
fn compare_stats(store: &Store, want: &Node) -> Result<(), String> {
    let l = store.stats().map_err(|e| format!("stats: {e}"))?.leases;
    let got = [
        ("leases_taken", l.taken),
        ("lease_units_leased", l.units_leased),
        ("lease_units_unused", l.units_unused),
        ("lease_units_returned", l.units_returned),
        ("lease_decisions", l.decisions),
    ];
    let mut diffs = Vec::new();
    for (field, value) in got {
        if let Some(n) = want.get(field) {
            let expected = int(n, field)?;
            if u64::try_from(expected).ok() != Some(value) {
                diffs.push(format!("{field}: expected {expected}, got {value}"));
            }
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!("stats: {}", diffs.join(", ")))
    }
}

fn main() {
    let root = yaml::repo();
    let schema = Schema::load(&yaml::load(&root.join("conformance/schema/schema.yaml")).unwrap());
    let runner = Runner { schema, rt: tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap() };
    let mut files: Vec<_> = std::fs::read_dir(root.join("conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no conformance/*.yaml");

    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let mut stores = vec![("memory".to_owned(), "memory://?clock=manual".to_owned())];
    if let Ok(url) = std::env::var("RL_TEST_REDIS_URL") {
        let sep = if url.contains('?') { '&' } else { '?' };
        stores.push(("redis".into(), format!("{url}{sep}clock=manual&prefix=rlrs-{nanos}-")));
    }
    // Redis Cluster too (keys of one rl key live in one slot).
    if let Ok(url) = std::env::var("RL_TEST_CLUSTER_URL") {
        let sep = if url.contains('?') { '&' } else { '?' };
        stores.push(("cluster".into(), format!("{url}{sep}clock=manual&prefix=rlrs-{nanos}-")));
    }
    let (mut passed, mut failed) = (0, 0);
    for (kind, url) in &stores {
        for mode in [Mode::Async, Mode::Blocking] {
            let label = format!("{kind} {}", if mode == Mode::Async { "async" } else { "blocking" });
            for (f, path) in files.iter().enumerate() {
                let file = path.file_name().unwrap().to_string_lossy();
                let doc = match yaml::load(path) {
                    Ok(d) => d,
                    Err(e) => {
                        println!("FAIL [{label}] {file}: (the file): {e}");
                        failed += 1;
                        continue;
                    }
                };
                for (i, case) in doc.get("cases").map(Node::items).unwrap_or(&[]).iter().enumerate() {
                    let mut case = case.clone();
                    let name = case.str("name").unwrap_or("").to_owned();
                    let case_url = if kind != "memory" { format!("{url}{f}-{i}-{}-", mode as u8) } else { url.clone() };
                    match runner.run_case(mode, &mut case, &case_url) {
                        Ok(()) => {
                            passed += 1;
                            println!("ok   [{label}] {file}: {name}");
                        }
                        Err(problem) => {
                            failed += 1;
                            println!("FAIL [{label}] {file}: {name}: {problem}");
                        }
                    }
                }
            }
        }
    }
    // The negative fixture: every case carries one unknown bogus_ field.
    let fixture = yaml::load(&root.join("conformance/schema/unknown_fields.yaml")).unwrap();
    for case in fixture.get("cases").map(Node::items).unwrap_or(&[]) {
        let mut case = case.clone();
        let name = case.str("name").unwrap_or("").to_owned();
        match runner.run_case(Mode::Blocking, &mut case, "memory://?clock=manual") {
            Err(p) if p.starts_with("bad case: ") && p.contains("unknown field 'bogus_") => {
                passed += 1;
                println!("ok   [schema] unknown_fields.yaml: {name}: refused");
            }
            other => {
                failed += 1;
                println!("FAIL [schema] unknown_fields.yaml: {name}: {other:?}, want it refused for its bogus_ field");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
