package dev.rl;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A drop-in for the Lettuce sliding-window-log limiter: the same constructor shape and {@code
 * isAllowed(clientId)} / {@code isAllowedAsync(clientId)}, with the same semantics (at most
 * maxRequests per client in any windowSizeMs, an exact sliding log), decided by rl's sliding_log
 * on Redis. Like the original it fails open: a Redis outage allows the request (rl's
 * on_failure=open). Latency percentiles come from {@link #latency()}.
 */
public final class SlidingWindowRateLimiter implements AutoCloseable {
  private final Store store;
  private final RateLimiter limiter;

  /** The original's constructor: Redis at host:port, maxRequests per windowSizeMs per client. */
  public SlidingWindowRateLimiter(
      String redisHost, int redisPort, long windowSizeMs, int maxRequests) {
    this("redis://" + Objects.requireNonNull(redisHost, "redisHost") + ":" + redisPort,
        windowSizeMs, maxRequests);
  }

  /** The same over any store URL (redis://... with settings, or memory://). */
  public SlidingWindowRateLimiter(String url, long windowSizeMs, int maxRequests) {
    if (windowSizeMs < 1) {
      throw new RateLimitException(
          Status.INVALID_ARG, "windowSizeMs: " + windowSizeMs + " is not positive");
    }
    if (maxRequests < 1) {
      throw new RateLimitException(
          Status.INVALID_ARG, "maxRequests: " + maxRequests + " is not positive");
    }
    Store opened = Store.open(url);
    try {
      this.limiter =
          opened.limiter(
              Map.of(
                  "algorithm", "sliding_log",
                  "limit", maxRequests + "/" + windowSizeMs + "ms",
                  "on_failure", "open",
                  "name", "sliding-window"));
    } catch (RuntimeException e) {
      opened.close();
      throw e;
    }
    this.store = opened;
  }

  /** True when clientId may make one more request now (and it is counted). */
  public boolean isAllowed(String clientId) {
    return limiter.tryAcquire(clientId, 1).allowed();
  }

  /** {@link #isAllowed} without blocking: completes on rl's I/O thread. */
  public CompletableFuture<Boolean> isAllowedAsync(String clientId) {
    return limiter.tryAcquireAsync(clientId, 1).thenApply(Decision::allowed);
  }

  /** The store's round-trip latency (p50/p95/p99/max) and counts since it opened. */
  public StoreStats latency() {
    return store.stats();
  }

  /** The underlying limiter, for peek/refund/reset and full decisions. */
  public RateLimiter limiter() {
    return limiter;
  }

  @Override
  public void close() {
    limiter.close();
    store.close();
  }
}
