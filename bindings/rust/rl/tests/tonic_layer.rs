//! The tower layer on a real tonic server (tonic's transport, h2 over
//! loopback) serving tonic-health's gRPC Health service, called by tonic's
//! own client: admitted calls carry the RateLimit fields in their response
//! metadata; a denial is HTTP 429, which a gRPC client sees as the status
//! UNAVAILABLE (the gRPC spec's mapping of HTTP statuses), with the fields.
use std::time::Duration;

use rl::tower::RateLimitLayer;
use rl::{Algorithm, LimiterConfig, Store};
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Server};
use tonic::{Code, Request};
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

fn check(user: &str) -> Request<HealthCheckRequest> {
    let mut r = Request::new(HealthCheckRequest { service: String::new() });
    r.metadata_mut().insert("x-user", user.parse().unwrap());
    r
}

#[tokio::test]
async fn a_tonic_service_admits_then_answers_unavailable() {
    let store = Store::open("memory://?clock=manual").unwrap();
    let lim = store.limiter(&LimiterConfig::new("3/1m").algorithm(Algorithm::FixedWindow).name("grpc")).unwrap();
    let layer = RateLimitLayer::new(lim, |req| {
        req.headers.get("x-user").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
    });
    let (_reporter, health) = tonic_health::server::health_reporter();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(Server::builder().layer(layer).add_service(health).serve_with_incoming_shutdown(
        TcpIncoming::from(listener),
        async {
            let _ = stopped.await;
        },
    ));

    let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect_timeout(Duration::from_secs(10));
    let mut client = HealthClient::new(channel.connect().await.unwrap());
    for i in 0..3 {
        let r = client.check(check("u1")).await.unwrap();
        assert_eq!(r.get_ref().status, 1, "SERVING"); // ServingStatus::Serving
        let fields = r.metadata();
        assert_eq!(fields.get("ratelimit-policy").unwrap(), "\"grpc\";q=3;w=60");
        assert_eq!(fields.get("ratelimit").unwrap().to_str().unwrap(), format!("\"grpc\";r={};t=60", 2 - i));
    }
    let denied = client.check(check("u1")).await.unwrap_err();
    assert_eq!(denied.code(), Code::Unavailable, "{denied:?}");
    assert!(denied.message().contains("429"), "{denied:?}");
    assert_eq!(denied.metadata().get("retry-after").unwrap(), "60");
    // Another key has its own limit.
    assert!(client.check(check("u2")).await.is_ok());

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}
