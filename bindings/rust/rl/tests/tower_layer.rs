//! The tower layer in an axum router: admissions carry the RateLimit fields,
//! denials are 429 with Retry-After, outages 503 (or a decision, as
//! on_failure says), other failures what on_error says.
use axum::body::Body;
use axum::routing::get;
use axum::Router;
use http::{Request, StatusCode};
use rl::tower::RateLimitLayer;
use rl::{Algorithm, LimiterConfig, OnFailure, Store};
use tower::ServiceExt;

fn app(limiter: rl::Limiter) -> Router {
    Router::new()
        .route(
            "/",
            get(|d: axum::extract::Extension<rl::Decision>| async move { format!("remaining {}", d.remaining) }),
        )
        .layer(RateLimitLayer::new(limiter, |req| {
            req.headers.get("x-user").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
        }))
}

fn request(user: &str) -> Request<Body> {
    Request::builder().uri("/").header("x-user", user).body(Body::empty()).unwrap()
}

fn header(r: &http::Response<Body>, name: &str) -> Option<String> {
    r.headers().get(name).map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn admits_then_denies_with_the_cores_fields() {
    let store = Store::open("memory://?clock=manual").unwrap();
    let lim = store.limiter(&LimiterConfig::new("5/1m").algorithm(Algorithm::FixedWindow).name("api")).unwrap();
    let app = app(lim);
    for i in 0..5 {
        let r = app.clone().oneshot(request("u1")).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "ratelimit-policy").as_deref(), Some("\"api\";q=5;w=60"));
        assert_eq!(header(&r, "ratelimit"), Some(format!("\"api\";r={};t=60", 4 - i)));
        assert_eq!(header(&r, "retry-after"), None);
    }
    let r = app.clone().oneshot(request("u1")).await.unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header(&r, "retry-after").as_deref(), Some("60"));
    assert_eq!(header(&r, "ratelimit").as_deref(), Some("\"api\";r=0;t=60"));
    // Another key has its own budget.
    assert_eq!(app.clone().oneshot(request("u2")).await.unwrap().status(), StatusCode::OK);
    // An empty key is bad input: the application's error path, 500 by default.
    assert_eq!(app.oneshot(request("")).await.unwrap().status(), StatusCode::INTERNAL_SERVER_ERROR);
}

#[tokio::test]
async fn an_outage_is_503_or_what_on_failure_says() {
    // Nothing listens on port 1: every call is an outage (RL_E_BACKEND_UNAVAILABLE or RL_E_TIMEOUT).
    let store = Store::open("redis://127.0.0.1:1?timeout_ms=100").unwrap();
    let closed = store.limiter(&LimiterConfig::new("5/1m").name("closed")).unwrap();
    let r = app(closed).oneshot(request("u")).await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let open = store.limiter(&LimiterConfig::new("5/1m").name("open").on_failure(OnFailure::Open)).unwrap();
    let r = app(open).oneshot(request("u")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "ratelimit"), None, "a fail-open admission counted nothing: no fields");
}

#[tokio::test]
async fn on_error_chooses_the_status_of_other_failures() {
    let store = Store::open("memory://?clock=manual").unwrap();
    let lim = store.limiter(&LimiterConfig::new("5/1m")).unwrap();
    let app = Router::new().route("/", get(|| async { "ok" })).layer(
        RateLimitLayer::new(lim, |_| String::new()).on_error(|e| {
            assert!(matches!(e, rl::Error::InvalidArg(_)));
            StatusCode::BAD_REQUEST
        }),
    );
    assert_eq!(app.oneshot(request("x")).await.unwrap().status(), StatusCode::BAD_REQUEST);
}
