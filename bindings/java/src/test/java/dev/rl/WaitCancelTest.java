package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Cancelling acquireAsync's future: librl ends the wait and refunds an admission, once. */
class WaitCancelTest {
  private static final int LIMIT = 1000;
  private static final int WAITS = 200;

  /**
   * Each wait is cancelled while librl's admission is on its way: it either completed first (kept)
   * or librl refunds it. The key ends exactly at the units kept: none lost, none refunded twice.
   */
  @Test
  void cancelledWaitsAdmittedOnTheWayAreRefundedOnce() {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter = store.limiter(Map.of("limit", LIMIT + "/h"))) {
      int kept = 0;
      for (int i = 0; i < WAITS; i++) {
        CompletableFuture<Decision> wait = limiter.acquireAsync("k", 1, Duration.ofHours(1));
        if (!wait.cancel(true) && wait.join().allowed()) kept++;
      }
      long want = LIMIT - kept;
      long remaining = -1;
      // The refunds run on librl's thread: let them in (not a wait for time).
      for (int i = 0; i < 100_000 && remaining != want; i++) {
        Thread.yield();
        remaining = limiter.peek("k", 0).remaining();
        assertTrue(remaining <= want, "a refund counted twice (" + kept + " kept)");
      }
      assertEquals(want, remaining, "a refund lost (" + kept + " of " + WAITS + " kept)");
      System.out.printf("wait cancel: %d of %d waits kept, %d refunded%n", kept, WAITS, WAITS - kept);
    }
  }

  @Test
  void aCancelledSleepingWaitEndsAndTakesNothing() {
    try (Store store = Store.open("memory://");
        RateLimiter limiter = store.limiter(Map.of("limit", "1/h"))) {
      assertTrue(limiter.tryAcquire("k", 1).allowed());
      CompletableFuture<Decision> wait = limiter.acquireAsync("k", 1, Duration.ofHours(2));
      assertTrue(wait.cancel(true));
      assertTrue(wait.isCancelled());
      assertEquals(0, limiter.peek("k", 0).remaining());
      assertFalse(limiter.tryAcquire("k", 1).allowed());
    }
  }
}
