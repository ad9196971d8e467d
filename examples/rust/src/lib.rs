//! The axum application of `src/bin/axum-server.rs`, as a function so that
//! its test serves it too.
use axum::extract::Extension;
use axum::routing::get;
use axum::Router;
use rl::tower::RateLimitLayer;

/// Every route limited by `limiter`, keyed by the `x-api-key` header
/// ("anonymous" without one). `/` says how many requests the key has left.
pub fn app(limiter: rl::Limiter) -> Router {
    Router::new()
        .route(
            "/",
            get(|Extension(d): Extension<rl::Decision>| async move { format!("hello, {} left\n", d.remaining) }),
        )
        .layer(RateLimitLayer::new(limiter, |req| {
            req.headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("anonymous").to_owned()
        }))
}
