//! The idiomatic API: bad input, closed stores, URL shapes on every surface,
//! the error enum and the typed settings against the core's tables, waits
//! given up on, batches, and the shared HTTP header table.
mod common;

use std::time::Duration;

use common::yaml::{self, Node};
use rl::{Algorithm, Error, LimiterConfig, OnFailure, Request, Store};

fn manual() -> Store {
    Store::open("memory://?clock=manual").unwrap()
}

#[track_caller]
fn want_invalid<T: std::fmt::Debug>(call: &str, r: rl::Result<T>, what: &str) {
    match r {
        Err(Error::InvalidArg(m)) if m.contains(what) => {}
        other => panic!("{call}: got {other:?}, want InvalidArg naming {what:?}"),
    }
}

#[test]
fn bad_input_is_an_error_naming_it() {
    let s = manual();
    let lim = s.limiter(&LimiterConfig::new("10/s")).unwrap();
    let long = "k".repeat(rl::MAX_KEY_LEN + 1);
    want_invalid("open(bad scheme)", Store::open("nope://x"), "nope");
    want_invalid("open(NUL in url)", Store::open("memory://\0"), "url");
    want_invalid("open(NUL in url setting)", Store::open("memory://?clock=manual\0x"), "url");
    want_invalid("open(bad setting)", Store::open("memory://?clock=sundial"), "clock");
    want_invalid("limiter(bad limit)", s.limiter(&LimiterConfig::new("ten/s")), "limit");
    want_invalid("limiter(no limit)", s.limiter(&LimiterConfig::default()), "limit");
    want_invalid("limiter(negative burst)", s.limiter(&LimiterConfig::new("1/s").burst(-5)), "burst");
    want_invalid("limiter(bad name)", s.limiter(&LimiterConfig::new("1/s").name("a{b}")), "name");
    want_invalid("limiter(NUL in name)", s.limiter(&LimiterConfig::new("1/s").name("a\0b")), "name");
    want_invalid("limiter(NUL in limit)", s.limiter(&LimiterConfig::new("1/s\0junk")), "limit");
    want_invalid(
        "limiter(NUL in setting value)",
        s.limiter(&LimiterConfig::new("1/s").setting("granularity", "1ms\0")),
        "granularity",
    );
    want_invalid(
        "limiter(NUL in setting key)",
        s.limiter(&LimiterConfig::new("1/s").setting("name\0x", "a")),
        "setting key",
    );
    want_invalid("limiter(unknown setting)", s.limiter(&LimiterConfig::new("1/s").setting("colour", "red")), "colour");
    want_invalid("acquire(empty key)", lim.acquire_blocking("", 1), "key");
    want_invalid("acquire(513-byte key)", lim.acquire_blocking(&long, 1), "key");
    want_invalid("acquire(negative cost)", lim.acquire_blocking("k", -1), "cost");
    want_invalid("acquire(zero cost)", lim.acquire_blocking("k", 0), "cost");
    want_invalid("acquire(huge cost)", lim.acquire_blocking("k", 1 << 62), "cost");
    want_invalid("peek(empty key)", lim.peek_blocking("", 0), "key");
    want_invalid("refund(zero cost)", lim.refund_blocking("k", 0), "cost");
    want_invalid("reset(empty key)", lim.reset_blocking(""), "key");
    want_invalid("acquire_wait(negative cost)", lim.acquire_wait_blocking("k", -3, None), "cost");
    want_invalid("acquire_batch(empty)", lim.acquire_batch_blocking(&[]), "count");
    want_invalid(
        "acquire_batch(bad entry)",
        lim.acquire_batch_blocking(&[Request::new("a", 1), Request::new("", 1)]),
        "requests[1]",
    );
    want_invalid("set_clock(backwards)", s.advance_clock_us(-1), "");
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        want_invalid("async acquire(513-byte key)", lim.acquire(&long, 1).await, "key");
        want_invalid("async acquire_wait(zero cost)", lim.acquire_wait("k", 0, None).await, "cost");
        want_invalid("async acquire_batch(bad entry)", lim.acquire_batch(&[Request::new("", 1)]).await, "requests[0]");
    });
}

#[test]
fn a_closed_store_fails_every_call_with_shutdown() {
    let s = manual();
    let lim = s.limiter(&LimiterConfig::new("10/s")).unwrap();
    s.close();
    s.close(); // idempotent
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let calls: Vec<(&str, rl::Result<()>)> = vec![
        ("acquire_blocking", lim.acquire_blocking("k", 1).map(drop)),
        ("peek_blocking", lim.peek_blocking("k", 1).map(drop)),
        ("reset_blocking", lim.reset_blocking("k")),
        ("acquire", rt.block_on(lim.acquire("k", 1)).map(drop)),
        ("acquire_wait", rt.block_on(lim.acquire_wait("k", 1, None)).map(drop)),
        ("acquire_batch", rt.block_on(lim.acquire_batch(&[Request::new("k", 1)])).map(drop)),
    ];
    for (call, r) in calls {
        match r {
            Err(e @ Error::Shutdown(_)) => {
                assert_eq!(e.message(), "store: closed", "{call}");
                assert!(!e.is_outage());
            }
            other => panic!("{call}: {other:?}, want Shutdown"),
        }
    }
    // The handles stay printable and freeable after the close.
    assert_eq!(format!("{s}"), "memory://?clock=manual");
}

#[test]
fn the_error_enum_has_a_variant_per_status_of_rl_h() {
    for status in 1..rl_sys::RL_STATUS_COUNT as i32 {
        let e = Error::from_status(status, "m");
        assert_eq!(e.status(), status);
        let name = unsafe { std::ffi::CStr::from_ptr(rl_sys::rl_status_name(status)) }.to_str().unwrap();
        assert_eq!(e.status_name(), name);
        // The variant is the status's name in CamelCase: RL_E_INVALID_ARG is InvalidArg.
        let camel: String =
            name.trim_start_matches("RL_E_").split('_').map(|w| w[..1].to_owned() + &w[1..].to_lowercase()).collect();
        assert!(format!("{e:?}").starts_with(&format!("Error({name}")), "{e:?}");
        assert_eq!(variant_name(&e), camel);
        assert_eq!(e.is_outage(), unsafe { rl_sys::rl_status_is_outage(status) } != 0);
        assert_eq!(e.to_string(), format!("rl: {name}: m"));
        assert!(!e.description().is_empty());
    }
    assert!(Error::Timeout(String::new()).is_outage() && Error::BackendUnavailable(String::new()).is_outage());
}

fn variant_name(e: &Error) -> &'static str {
    match e {
        Error::InvalidArg(_) => "InvalidArg",
        Error::Timeout(_) => "Timeout",
        Error::BackendUnavailable(_) => "BackendUnavailable",
        Error::BackendError(_) => "BackendError",
        Error::Shutdown(_) => "Shutdown",
        Error::NoMemory(_) => "NoMemory",
        Error::Internal(_) => "Internal",
        Error::Auth(_) => "Auth",
        Error::Unsupported(_) => "Unsupported",
        _ => "unknown",
    }
}

#[test]
fn typed_settings_are_the_cores() {
    let table = rl::settings();
    let find = |name: &str| table.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no setting {name}"));
    for name in ["algorithm", "limit", "burst", "name", "on_failure", "local_share"] {
        assert_eq!(find(name).scope, "limiter", "{name}");
    }
    let algorithms: Vec<_> = Algorithm::ALL.iter().map(|a| a.as_str()).collect();
    assert_eq!(find("algorithm").choices, algorithms);
    let failures: Vec<_> = OnFailure::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(find("on_failure").choices, failures);
    assert_eq!(find("burst").kind, "counts");
    // rl_config_describe lists the same settings in the same order.
    for (i, s) in table.iter().enumerate() {
        let name = unsafe { rl_sys::rl_config_describe(i, std::ptr::null_mut()) };
        assert_eq!(unsafe { std::ffi::CStr::from_ptr(name) }.to_str().unwrap(), s.name);
    }
    assert!(unsafe { rl_sys::rl_config_describe(table.len(), std::ptr::null_mut()) }.is_null());
    // Every typed field reaches rl as the setting it names.
    let s = manual();
    let lim = s
        .limiter(
            &LimiterConfig::new("5/s")
                .algorithm(Algorithm::TokenBucket)
                .burst(7)
                .name("typed")
                .on_failure(OnFailure::Local)
                .local_share("1/2"),
        )
        .unwrap();
    assert_eq!(lim.name(), "typed");
    assert_eq!(lim.limits(), &[rl::Limit { limit: 5, window: Duration::from_secs(1), burst: 7 }]);
}

#[test]
fn every_url_shape_shows_only_the_display_form() {
    let table = yaml::load(&yaml::repo().join("tests/data/url_shapes.yaml")).unwrap();
    let shapes = table.get("shapes").map(Node::items).unwrap();
    assert!(shapes.len() >= 12);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    for shape in shapes {
        let name = shape.str("name").unwrap();
        let secrets: Vec<&str> = shape.get("secrets").map(Node::items).unwrap_or(&[]).iter().map(Node::text).collect();
        let no_secret = |text: &str, surface: &str| {
            for secret in &secrets {
                assert!(!text.contains(secret), "{name}: {surface} shows {secret}: {text}");
            }
        };
        if shape.str("opens") == Some("false") {
            let e = Store::open(shape.str("url").unwrap()).unwrap_err();
            assert!(matches!(e, Error::InvalidArg(_)), "{name}: {e:?}");
            no_secret(&format!("{e} {e:?}"), "the refused open");
            continue;
        }
        let display = shape.str("display").unwrap();
        let s = Store::open(shape.str("url").unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.display_url(), display, "{name}");
        assert_eq!(format!("{s}"), display, "{name}");
        assert_eq!(format!("{s:?}"), format!("Store({display})"), "{name}");
        let lim = s
            .limiter(&LimiterConfig::new("5/s").setting("timeout_ms", "200"))
            .or_else(|_| s.limiter(&LimiterConfig::new("5/s")));
        let lim = lim.unwrap();
        no_secret(&format!("{lim} {lim:?}"), "the limiter");
        assert!(format!("{lim:?}").contains(display), "{name}: {lim:?}");
        // The tower layer and the trypema-shaped limiter show the same form.
        let layer = rl::tower::RateLimitLayer::new(lim.clone(), |_| String::new());
        assert!(format!("{layer:?}").contains(display), "{name}: {layer:?}");
        no_secret(&format!("{layer:?}"), "the tower layer");
        let provider = rl::trypema::RedisRateLimiterProvider::from_options(rl::trypema::RedisRateLimiterOptions {
            store: s.clone(),
            prefix: None,
            window_size_seconds: rl::trypema::WindowSizeSeconds::try_from(1).unwrap(),
            rate_group_size_ms: rl::trypema::RateGroupSizeMs::try_from(10).unwrap(),
            hard_limit_factor: rl::trypema::HardLimitFactor::default(),
        });
        assert!(format!("{provider:?}").contains(display), "{name}: {provider:?}");
        no_secret(&format!("{provider:?}"), "the trypema provider");
        if !s.info().in_process {
            // A call to a closed port fails as an outage; its message shows no secret.
            let e = rt.block_on(lim.acquire("k", 1)).unwrap_err();
            no_secret(&format!("{e} {e:?}"), "a failed call");
        }
        no_secret(&s.metrics().unwrap(), "the metrics");
        if let Some(refused) = shape.str("refused") {
            let e = Store::open(refused).unwrap_err();
            no_secret(&format!("{e} {e:?}"), "the refused open");
        }
    }
}

#[test]
fn batches_decide_each_request_in_order() {
    let s = manual();
    let lim = s.limiter(&LimiterConfig::new("2/h").algorithm(Algorithm::FixedWindow)).unwrap();
    let reqs = [Request::new("a", 1), Request::new("a", 1), Request::new("a", 1), Request::new("b", 2)];
    let ds = lim.acquire_batch_blocking(&reqs).unwrap();
    assert_eq!(ds.iter().map(|d| d.allowed).collect::<Vec<_>>(), [true, true, false, true]);
    let each = lim.acquire_batch_each_blocking(&reqs[..1]).unwrap();
    assert!(!each[0].as_ref().unwrap().allowed);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let ds = rt.block_on(lim.acquire_batch(&[Request::new("c", 1)])).unwrap();
    assert!(ds[0].allowed && ds[0].remaining == 1);
    let each = rt.block_on(lim.acquire_batch_each(&[Request::new("c", 1), Request::new("c", 1)])).unwrap();
    assert_eq!(each.iter().map(|r| r.as_ref().unwrap().allowed).collect::<Vec<_>>(), [true, false]);
}

#[test]
fn acquire_wait_returns_a_denial_it_cannot_outwait_and_drop_cancels() {
    // A real clock: the wait would be up to an hour, past the 1 ms deadline, so
    // rl answers the denial at once without waiting in vain.
    let s = Store::open("memory://").unwrap();
    let lim = s.limiter(&LimiterConfig::new("1/1h").algorithm(Algorithm::FixedWindow)).unwrap();
    assert!(lim.acquire_blocking("k", 1).unwrap().allowed);
    let d = lim.acquire_wait_blocking("k", 1, Some(Duration::from_millis(1))).unwrap();
    assert!(!d.allowed && d.retry_after.unwrap() > Duration::from_millis(1));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async {
        let d = lim.acquire_wait("k", 1, Some(Duration::from_millis(1))).await.unwrap();
        assert!(!d.allowed);
        // A wait with no deadline, given up on after its first poll: dropping
        // the future cancels it (rl_wait_cancel), so it never takes the unit
        // the refund gives back, which the next acquire gets.
        let pending = tokio::time::timeout(Duration::ZERO, lim.acquire_wait("k", 1, None)).await;
        assert!(pending.is_err(), "the wait cannot have been admitted");
        lim.refund("k", 1).await.unwrap();
        assert!(lim.acquire("k", 1).await.unwrap().allowed);
    });
    s.close(); // returns: no wait is left behind on the store's timer
}

#[test]
fn handles_are_send_sync_and_shared_across_threads() {
    let s = manual();
    let lim = s.limiter(&LimiterConfig::new("1000/h").algorithm(Algorithm::FixedWindow)).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let lim = lim.clone();
            std::thread::spawn(move || (0..300).filter(|_| lim.acquire_blocking("hot", 1).unwrap().allowed).count())
        })
        .collect();
    let admitted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(admitted, 1000);
    drop(s); // the limiter keeps the store open
    assert!(!lim.acquire_blocking("hot", 1).unwrap().allowed);
}

#[test]
fn headers_match_the_shared_table() {
    let table = yaml::load(&yaml::repo().join("conformance/http/headers.yaml")).unwrap();
    let cases = table.get("cases").map(Node::items).unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let name = case.str("name").unwrap();
        let l = case.get("limiter").unwrap();
        let limits: Vec<rl::Limit> = l
            .get("limits")
            .map(Node::items)
            .unwrap_or(&[])
            .iter()
            .map(|x| rl::Limit {
                limit: x.str("limit").unwrap().parse().unwrap(),
                window: Duration::from_micros(x.str("window_us").unwrap().parse().unwrap()),
                burst: x.str("burst").map_or(0, |b| b.parse().unwrap()),
            })
            .collect();
        let d = case.get("decision").unwrap();
        let int = |f: &str| d.str(f).map_or(0, |v| v.parse::<i64>().unwrap());
        let source = match d.str("source").unwrap_or("store") {
            "store" => rl::Source::Store,
            "fail_open" => rl::Source::FailOpen,
            "local" => rl::Source::Local,
            "deny_cache" => rl::Source::DenyCache,
            other => panic!("{name}: source {other}"),
        };
        let decision = rl::Decision {
            allowed: d.str("allowed") == Some("true"),
            limit: limits.get(int("limit_index").max(0) as usize).map_or(0, |l| l.limit),
            remaining: int("remaining"),
            retry_after: if int("retry_after_us") < 0 {
                None
            } else {
                Some(Duration::from_micros(int("retry_after_us") as u64))
            },
            reset_after: Duration::from_micros(int("reset_after_us").max(0) as u64),
            source,
            limit_index: int("limit_index") as usize,
            suppression_factor: 0.0,
        };
        let got = rl::render_headers(l.str("name").unwrap_or(""), &limits, &decision);
        if let Some(want) = case.str("error") {
            match got {
                Err(Error::InvalidArg(m)) if m.contains(want) => {}
                other => panic!("{name}: {other:?}, want InvalidArg containing {want:?}"),
            }
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
        let fields: Vec<(String, String)> =
            got.fields().into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        let want: Vec<(String, String)> =
            case.get("headers").unwrap().entries().iter().map(|(k, v)| (k.clone(), v.text().to_owned())).collect();
        assert_eq!(fields, want, "{name}");
    }
}
