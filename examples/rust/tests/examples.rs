//! The examples run: the axum app limits by key, the demo worker speaks the
//! demo's protocol, the quick start prints 5 allowed then 2 denied.
use std::process::Command;

use axum::body::Body;
use http::{Request, StatusCode};
use tower::ServiceExt;

#[tokio::test]
async fn the_axum_app_limits_each_key() {
    let store = rl::Store::open("memory://?clock=manual").unwrap();
    let app = rl_examples::app(store.limiter(&rl::LimiterConfig::new("2/10s").name("api")).unwrap());
    let get = |key: &str| Request::builder().uri("/").header("x-api-key", key).body(Body::empty()).unwrap();
    assert_eq!(app.clone().oneshot(get("k1")).await.unwrap().status(), StatusCode::OK);
    assert_eq!(app.clone().oneshot(get("k1")).await.unwrap().status(), StatusCode::OK);
    let denied = app.clone().oneshot(get("k1")).await.unwrap();
    assert_eq!(denied.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(denied.headers()["retry-after"], "5");
    assert_eq!(app.oneshot(get("k2")).await.unwrap().status(), StatusCode::OK);
}

#[test]
fn the_demo_worker_speaks_the_protocol() {
    let out = Command::new(env!("CARGO_BIN_EXE_demo-worker"))
        .args(["memory://", "demo", "5/1h", "user:42", "7"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "ready");
    assert!(lines[1].starts_with("{\"worker\":\"rust\""), "{}", lines[1]);
    assert!(lines[1].contains("\"admitted\":5,\"denied\":2"), "{}", lines[1]);
    let bad = Command::new(env!("CARGO_BIN_EXE_demo-worker")).args(["memory://"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
fn the_quick_start_prints_five_allowed_then_two_denied() {
    let out = Command::new(env!("CARGO_BIN_EXE_hello")).arg("memory://").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let words: Vec<&str> = text.lines().map(|l| l.split([',', ' ']).next().unwrap()).collect();
    assert_eq!(words, ["allowed", "allowed", "allowed", "allowed", "allowed", "denied", "denied"], "{text}");
}

#[test]
fn the_quick_start_is_the_readmes_block() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let marker = "<!-- clean-install rust src/main.rs -->\n```rust\n";
    let start = readme.find(marker).expect("README has the Rust block") + marker.len();
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let main = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/main.rs")).unwrap();
    let code: String = main.lines().filter(|l| !l.starts_with("//!")).map(|l| format!("{l}\n")).collect();
    assert_eq!(code, block);
}
