//! An axum server behind rl's tower layer: 429 with RateLimit-Policy,
//! RateLimit and Retry-After past the limit, 503 when the store is down.
//!
//!     cargo run --bin axum-server -- [URL] [LIMIT] [ADDR]
//!     cargo run --bin axum-server -- memory:// 5/10s 127.0.0.1:3000
//!     curl -i -H 'x-api-key: k1' http://127.0.0.1:3000/
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "memory://".into());
    let limit = args.next().unwrap_or_else(|| "5/10s".into());
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());
    let store = rl::Store::open(&url)?;
    let limiter = store.limiter(&rl::LimiterConfig::new(limit).name("api"))?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{} ({store})", listener.local_addr()?);
    axum::serve(listener, rl_examples::app(limiter)).await?;
    Ok(())
}
