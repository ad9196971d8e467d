package dev.rl.bench;

import dev.rl.RateLimiter;
import dev.rl.Store;
import java.util.Map;

/** rl's Java binding: a blocking tryAcquire on one store (its own connection to Redis). */
final class RlContender implements Contender {
  private final String algorithm;
  private final Store store;
  private final RateLimiter limiter;

  RlContender(String redisUrl, String algorithm, String limit) {
    this.algorithm = algorithm;
    // RL_BENCH_STORE_OPTIONS: bench/run's --store-options, URL query settings under test.
    String options = System.getenv().getOrDefault("RL_BENCH_STORE_OPTIONS", "");
    this.store =
        Store.open(
            redisUrl + "?prefix=bench-rl-" + algorithm + "-" + System.nanoTime()
                + (options.isEmpty() ? "" : "&" + options));
    this.limiter = store.limiter(Map.of("algorithm", algorithm, "limit", limit));
  }

  @Override
  public String name() {
    return "rl " + algorithm;
  }

  @Override
  public boolean decide(String key) {
    return limiter.tryAcquire(key, 1).allowed();
  }

  /** The store's round-trip latency, for the log. */
  String stats() {
    return store.stats().toString();
  }

  @Override
  public void close() {
    limiter.close();
    store.close();
  }
}
