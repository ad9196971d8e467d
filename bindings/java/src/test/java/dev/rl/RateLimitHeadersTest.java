package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The header fields match the Node and Go middleware's, from the limits rl parsed. */
class RateLimitHeadersTest {
  @Test
  void oneLimitNamesItsItemAfterTheLimiter() {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter =
            store.limiter(Map.of("algorithm", "gcra", "limit", "2/10s", "name", "api"))) {
      assertEquals(List.of(new Limit(2, Duration.ofSeconds(10), 2)), limiter.limits());
      RateLimitHeaders headers = new RateLimitHeaders(limiter);
      assertEquals("\"api\";q=2;w=10", headers.policy());
      assertEquals(
          Map.of("RateLimit-Policy", "\"api\";q=2;w=10", "RateLimit", "\"api\";r=1;t=5"),
          headers.of(limiter.tryAcquire("k", 1)));
      limiter.tryAcquire("k", 1);
      store.clockAdvance(1); // 1 us: the wait and the reset round up to whole seconds
      Map<String, String> denied = headers.of(limiter.tryAcquire("k", 1));
      assertEquals("\"api\";r=0;t=10", denied.get("RateLimit"));
      assertEquals("5", denied.get("Retry-After"));
      // A cost above the burst can never be admitted: no Retry-After.
      assertEquals(null, headers.of(limiter.tryAcquire("k", 3)).get("Retry-After"));
    }
  }

  @Test
  void severalLimitsAreNumberedAndTheDecidingOneIsNamed() {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter =
            store.limiter(Map.of("algorithm", "fixed_window", "limit", "5/s, 5/1m", "name", "x"))) {
      RateLimitHeaders headers = new RateLimitHeaders(limiter);
      assertEquals("\"x-0\";q=5;w=1, \"x-1\";q=5;w=60", headers.policy());
      for (int i = 0; i < 5; i++) limiter.tryAcquire("k", 1);
      store.clockAdvance(1_000_000);
      Decision d = limiter.tryAcquire("k", 1); // the second's window is new; the minute's is spent
      assertEquals(1, d.limitIndex());
      assertEquals("\"x-1\"", headers.of(d).get("RateLimit").split(";")[0]);
    }
  }

  @Test
  void aFailOpenDecisionGetsNoFields() {
    try (Store store = Store.open("redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100");
        RateLimiter limiter = store.limiter(Map.of("limit", "1/s", "on_failure", "open"))) {
      Decision d = limiter.tryAcquire("k", 1);
      assertEquals(Source.FAIL_OPEN, d.source());
      assertEquals(Map.of(), new RateLimitHeaders(limiter).of(d));
    }
  }
}
