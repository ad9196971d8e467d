package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Single, async and batch decisions carry algorithm suppressed's factor. */
class SuppressedTest {
  @Test
  void theFactorReachesEveryKindOfDecision() throws Exception {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter =
            store.limiter(
                Map.of("algorithm", "suppressed", "limit", "16/4s", "hard_limit_factor", "2"))) {
      // 16/4s is 4/s; 16 units in one second are 16/s: factor 1 - 4/16 up to the hard limit 32.
      assertEquals(0.0, limiter.tryAcquire("k", 16).suppressionFactor());
      assertEquals(0.75, limiter.peek("k", 1).suppressionFactor());
      assertEquals(0.75, limiter.peekAsync("k", 1).get().suppressionFactor());
      List<Decision> batch =
          limiter
              .acquireBatchAsync(
                  List.of(new RateLimiter.Request("k", 1), new RateLimiter.Request("k", 17)))
              .get();
      assertEquals(0.75, batch.get(0).suppressionFactor());
      assertFalse(batch.get(1).allowed());
      assertEquals(1.0, batch.get(1).suppressionFactor());
    }
  }
}
