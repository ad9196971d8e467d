package dev.rl.bench;

import dev.rl.Decision;
import dev.rl.RateLimiter;
import dev.rl.Store;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * rl's Java binding on one store (its own connection to Redis): a blocking tryAcquire, or
 * tryAcquireAsync.
 */
final class RlContender implements AsyncContender {
  private final String algorithm;
  private final Store store;
  private final RateLimiter limiter;

  private final String suffix;

  RlContender(String redisUrl, String algorithm, String limit) {
    this(redisUrl, algorithm, limit, "", "");
  }

  /**
   * settings: URL query settings of its own (e.g. "&script_mode=module"); suffix: after its name
   * ("rl gcra module").
   */
  RlContender(String redisUrl, String algorithm, String limit, String settings, String suffix) {
    this.algorithm = algorithm;
    this.suffix = suffix;
    // RL_BENCH_STORE_OPTIONS: bench/run's --store-options, URL query settings under test.
    String options = System.getenv().getOrDefault("RL_BENCH_STORE_OPTIONS", "");
    this.store =
        Store.open(
            redisUrl + "?prefix=bench-rl-" + algorithm + "-" + System.nanoTime()
                + settings
                + (options.isEmpty() ? "" : "&" + options));
    this.limiter = store.limiter(Map.of("algorithm", algorithm, "limit", limit));
  }

  @Override
  public String name() {
    return "rl " + algorithm + suffix;
  }

  @Override
  public boolean decide(String key) {
    return limiter.tryAcquire(key, 1).allowed();
  }

  @Override
  public CompletionStage<Boolean> decideAsync(String key) {
    return limiter.tryAcquireAsync(key, 1).thenApply(Decision::allowed);
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
