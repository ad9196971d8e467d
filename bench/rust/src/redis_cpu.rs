//! Redis CPU per decision from INFO commandstats (bench/README.md's rule):
//! CONFIG RESETSTAT before a phase; after it the usec of every command but
//! the harness's own INFO and CONFIG, and when scripts or transactions ran,
//! only the commands clients send (a script's redis.call is listed too, its
//! time already in the script's).
use std::collections::HashMap;

pub struct Admin(redis::aio::ConnectionManager);

const RUNS_OTHERS: [&str; 7] = ["eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "exec"];

fn entry_command(c: &str) -> bool {
    RUNS_OTHERS.contains(&c)
        || c == "multi"
        || c.starts_with("script|")
        || c.starts_with("function|")
        || c.contains('.')
}

impl Admin {
    pub async fn new(url: &str) -> Admin {
        let client = redis::Client::open(url).expect("a Redis URL");
        Admin(redis::aio::ConnectionManager::new(client).await.expect("Redis answers"))
    }

    pub fn connection(&self) -> redis::aio::ConnectionManager {
        self.0.clone()
    }

    pub async fn reset(&mut self) {
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(&mut self.0).await.unwrap();
    }

    pub async fn usec(&mut self) -> f64 {
        let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut self.0).await.unwrap();
        let mut usec_of: HashMap<String, f64> = HashMap::new();
        let mut nested = false;
        for line in info.lines() {
            let Some((name, stats)) = line.trim().split_once(':') else { continue };
            let Some(command) = name.strip_prefix("cmdstat_") else { continue };
            if command == "info" || command == "config" {
                continue;
            }
            nested |= RUNS_OTHERS.contains(&command);
            for field in stats.split(',') {
                if let Some(v) = field.strip_prefix("usec=") {
                    *usec_of.entry(command.to_owned()).or_default() += v.parse::<f64>().unwrap_or(0.0);
                }
            }
        }
        usec_of.iter().filter(|(c, _)| !nested || entry_command(c)).map(|(_, u)| u).sum()
    }
}
