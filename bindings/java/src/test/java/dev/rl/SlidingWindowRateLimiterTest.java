package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The Lettuce sliding-window-log drop-in: its constructor, its calls, its semantics. */
class SlidingWindowRateLimiterTest {
  @Test
  void admitsMaxRequestsInAnySlidingWindow() {
    String url = TestRedis.fresh("clock=manual");
    try (SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(url, 1000, 3)) {
      Store store = limiter.limiter().store();
      assertTrue(limiter.isAllowed("client"));
      store.clockAdvance(500_000);
      assertTrue(limiter.isAllowed("client"));
      assertTrue(limiter.isAllowedAsync("client").join());
      assertFalse(limiter.isAllowed("client"));
      assertTrue(limiter.isAllowed("other client"), "clients are limited apart");
      store.clockAdvance(500_000); // the first request leaves the window, the others stay
      assertTrue(limiter.isAllowedAsync("client").join());
      assertFalse(limiter.isAllowed("client"));
    }
  }

  @Test
  void theOriginalConstructorReportsRoundTripLatency() {
    URI redis = URI.create(TestRedis.url());
    try (SlidingWindowRateLimiter limiter =
        new SlidingWindowRateLimiter(redis.getHost(), redis.getPort(), 60_000, 1000)) {
      String client = "client-" + System.nanoTime();
      int allowed = 0;
      for (int i = 0; i < 1100; i++) if (limiter.isAllowed(client)) allowed++;
      assertEquals(1000, allowed);
      StoreStats stats = limiter.latency();
      System.out.printf(
          "sliding window on Redis: %d round trips, p50 %s p95 %s p99 %s max %s%n",
          stats.roundTrips(), stats.p50(), stats.p95(), stats.p99(), stats.max());
      assertTrue(stats.roundTrips() >= 1100);
      assertTrue(stats.p50().compareTo(Duration.ZERO) > 0);
      assertTrue(stats.p50().compareTo(stats.p99()) <= 0);
      limiter.limiter().reset(client);
    }
  }

  @Test
  void aRedisOutageFailsOpenAsTheOriginalDoes() throws Exception {
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort(); // nothing listens there once closed
    }
    String url = "redis://127.0.0.1:" + closedPort + "?timeout_ms=100&connect_timeout_ms=100";
    try (SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(url, 1000, 1)) {
      for (int i = 0; i < 3; i++) assertTrue(limiter.isAllowed("client"));
      assertTrue(limiter.isAllowedAsync("client").join());
      assertEquals(Source.FAIL_OPEN, limiter.limiter().tryAcquire("client", 1).source());
    }
  }

  @Test
  void badShapesAreInvalidArg() {
    assertEquals(
        Status.INVALID_ARG,
        assertThrows(RateLimitException.class, () -> new SlidingWindowRateLimiter("memory://", 0, 1))
            .status());
    assertEquals(
        Status.INVALID_ARG,
        assertThrows(
                RateLimitException.class, () -> new SlidingWindowRateLimiter("memory://", 1000, 0))
            .status());
    assertThrows(NullPointerException.class, () -> new SlidingWindowRateLimiter(null, 1, 1000, 1));
  }
}
