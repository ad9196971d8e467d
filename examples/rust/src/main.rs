//! The README's Rust quick start, as written there (scripts/test-clean-install
//! builds that block from the packaged crates): 7 calls on a limit of 5 per
//! minute, so 5 allowed then 2 denied.
#[tokio::main]
async fn main() -> Result<(), rl::Error> {
    let url = std::env::args().nth(1).unwrap_or_else(|| "memory://".into());
    let store = rl::Store::open(&url)?;
    let limiter = store.limiter(&rl::LimiterConfig::new("5/1m").algorithm(rl::Algorithm::Gcra).name("api"))?;
    for _ in 0..7 {
        let d = limiter.acquire("user:42", 1).await?;
        if d.allowed {
            println!("allowed");
        } else {
            println!("denied, retry after {:?}", d.retry_after.unwrap_or_default());
        }
    }
    store.close();
    Ok(())
}
