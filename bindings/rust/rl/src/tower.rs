//! A tower [`Layer`](tower_layer::Layer) that rate-limits HTTP requests:
//! axum services mount it in one line, tonic servers with
//! `Server::builder().layer(...)` (both tested; it fits any tower HTTP
//! service whose response body has `Default`). It answers with HTTP
//! statuses, not gRPC ones: a gRPC client sees a denial (429) as
//! `UNAVAILABLE`, with the fields in the status's metadata.
//!
//! ```no_run
//! # async fn run() -> Result<(), rl::Error> {
//! let store = rl::Store::open("redis://127.0.0.1:6379")?;
//! let limiter = store.limiter(&rl::LimiterConfig::new("100/1m").name("api"))?;
//! let app: axum::Router = axum::Router::new()
//!     .route("/", axum::routing::get(|| async { "hello" }))
//!     .layer(rl::tower::RateLimitLayer::new(limiter, |req: &http::request::Parts| {
//!         req.headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("anonymous").to_owned()
//!     }));
//! # Ok(()) }
//! ```
//!
//! Each request costs 1 unit of the key the closure takes from it. An
//! admitted request goes on to the service with the [`Decision`] in its
//! extensions, and its response gets the `RateLimit-Policy` and `RateLimit`
//! fields; a denied one is answered `429 Too Many Requests` with them and
//! `Retry-After` (rendered by the core, rl_headers_render, byte for byte
//! what every rl middleware sends). A failed call follows the rule every rl
//! middleware follows (docs/http-headers.md): a store outage with
//! `on_failure = closed` is `503 Service Unavailable`, never 429 (with
//! `open` or `local` an outage is a decision: see docs/failure.md); any
//! other failure (bad input such as an empty key, a closed store) is what
//! [`RateLimitLayer::on_error`] says, `500` by default. Responses rl makes
//! have an empty body (`Default` of the service's body type: axum's
//! `Body`, tonic's body).
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{HeaderName, HeaderValue};
use http::{request::Parts, Request, Response, StatusCode};
use tower_layer::Layer;
use tower_service::Service;

use crate::{Decision, Error, Limiter};

type KeyFn = dyn Fn(&Parts) -> String + Send + Sync;
type ErrorFn = dyn Fn(&Error) -> StatusCode + Send + Sync;

/// Mounts [`RateLimit`] on a service.
#[derive(Clone)]
pub struct RateLimitLayer {
    limiter: Limiter,
    key: Arc<KeyFn>,
    on_error: Arc<ErrorFn>,
}

impl std::fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RateLimitLayer({:?})", self.limiter)
    }
}

impl RateLimitLayer {
    /// Limits by `limiter`, one unit per request of the key `key` takes
    /// from the request's head (a header, the path, a peer address put in
    /// the extensions by the server).
    pub fn new(limiter: Limiter, key: impl Fn(&Parts) -> String + Send + Sync + 'static) -> RateLimitLayer {
        RateLimitLayer { limiter, key: Arc::new(key), on_error: Arc::new(|_| StatusCode::INTERNAL_SERVER_ERROR) }
    }

    /// The status of a response to a failure that is not an outage (bad
    /// input, a closed store, RL_E_AUTH): 500 unless this says otherwise.
    pub fn on_error(mut self, f: impl Fn(&Error) -> StatusCode + Send + Sync + 'static) -> RateLimitLayer {
        self.on_error = Arc::new(f);
        self
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit { inner, layer: self.clone() }
    }
}

/// The service [`RateLimitLayer`] makes.
#[derive(Clone, Debug)]
pub struct RateLimit<S> {
    inner: S,
    layer: RateLimitLayer,
}

fn set_fields(headers: &mut http::HeaderMap, limiter: &Limiter, d: &Decision) -> Result<(), Error> {
    for (name, value) in limiter.headers(d)?.fields() {
        // rl renders printable ASCII only, so both always parse.
        if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(n, v);
        }
    }
    Ok(())
}

fn answer<B: Default>(status: StatusCode) -> Response<B> {
    let mut r = Response::new(B::default());
    *r.status_mut() = status;
    r
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for RateLimit<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    ReqBody: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        // The clone that was polled ready serves this request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let layer = self.layer.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let key = (layer.key)(&parts);
            let d = match layer.limiter.acquire(key.as_bytes(), 1).await {
                Ok(d) => d,
                Err(e) if e.is_outage() => return Ok(answer(StatusCode::SERVICE_UNAVAILABLE)),
                Err(e) => return Ok(answer((layer.on_error)(&e))),
            };
            let mut fields = http::HeaderMap::new();
            if let Err(e) = set_fields(&mut fields, &layer.limiter, &d) {
                return Ok(answer((layer.on_error)(&e)));
            }
            if !d.allowed {
                let mut r = answer(StatusCode::TOO_MANY_REQUESTS);
                r.headers_mut().extend(fields);
                return Ok(r);
            }
            let mut req = Request::from_parts(parts, body);
            req.extensions_mut().insert(d);
            let mut r = inner.call(req).await?;
            r.headers_mut().extend(fields);
            Ok(r)
        })
    }
}
