package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A Java timeout reaches the store (rl_request.timeout_us): on a Redis that does not answer, every
 * call of a {@link RateLimiter#withTimeout} view, and an acquire wait, ends by its own deadline
 * with TIMEOUT, not by the store's timeout_ms.
 */
class DeadlineTest {
  private static final long DEADLINE_MS = 100;
  // Timeouts fire on rl's I/O thread; -Xcheck:jni and a loaded 2-core machine need slack.
  private static final long SLACK_MS = 250;

  @Test
  void everyCallOfATimeoutViewEndsByItsOwnDeadline() throws Exception {
    try (Store store = Store.open(TestRedis.fresh("timeout_ms=5000&breaker_failures=0"));
        RateLimiter limiter = store.limiter(Map.of("algorithm", "gcra", "limit", "1000/s"))) {
      limiter.tryAcquire("k", 1); // the connection is up and the scripts loaded
      RateLimiter view = limiter.withTimeout(Duration.ofMillis(DEADLINE_MS));
      assertEquals(Duration.ofMillis(DEADLINE_MS), view.timeout());
      List<RateLimiter.Request> batch =
          List.of(new RateLimiter.Request("a", 1), new RateLimiter.Request("b", 1));
      TestRedis.pause(4000);
      try {
        timesOut("tryAcquire", () -> view.tryAcquire("k", 1));
        timesOut("tryAcquire(byte[])", () -> view.tryAcquire(new byte[] {7}, 1));
        timesOut("peek", () -> view.peek("k", 1));
        timesOut("refund", () -> view.refund("k", 1));
        timesOut("reset", () -> view.reset("k"));
        timesOut("acquireBatch", () -> view.acquireBatch(batch));
        // The wait's own timeout is its store calls' deadline too, on the limiter itself.
        timesOut("acquire", () -> limiter.acquire("k", 1, Duration.ofMillis(DEADLINE_MS)));

        // The async forms, all at once: each fails by its deadline.
        long start = System.nanoTime();
        List<CompletableFuture<?>> calls = new ArrayList<>();
        calls.add(view.tryAcquireAsync("k", 1));
        calls.add(view.peekAsync("k", 1));
        calls.add(view.refundAsync("k", 1));
        calls.add(view.resetAsync("k"));
        calls.add(view.acquireBatchAsync(batch));
        calls.add(limiter.acquireAsync("k", 1, Duration.ofMillis(DEADLINE_MS)));
        for (CompletableFuture<?> call : calls) timesOutAsync(() -> call);
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("deadline: %d async calls failed with TIMEOUT after %d ms%n", calls.size(), ms);
        assertTrue(ms < DEADLINE_MS + SLACK_MS, "async calls took " + ms + " ms");
      } finally {
        TestRedis.awaitPauseEnd();
      }
      // The view shares the limiter, and closing it leaves the limiter open.
      view.close();
      assertTrue(afterReconnect(limiter).allowed());
      assertTrue(view.tryAcquire("k", 1).allowed());
    }
  }

  /**
   * The limiter's next answer once rl has reconnected. Calls that time out on a paused Redis may
   * make rl drop the connection; between reconnect attempts a call fails at once with the last
   * failure ("... (reconnecting)"), so the first call after the pause may land there.
   */
  private static Decision afterReconnect(RateLimiter limiter) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (true) {
      try {
        return limiter.tryAcquire("k", 1);
      } catch (RateLimitException e) {
        if (!e.status().isOutage() || System.nanoTime() > until) throw e;
        Thread.sleep(10); // the next reconnect attempt is an event on rl's thread, not a time
      }
    }
  }

  @Test
  void aLongerTimeoutDoesNotExtendTheStores() throws Exception {
    try (Store store = Store.open(TestRedis.fresh("timeout_ms=" + DEADLINE_MS));
        RateLimiter limiter = store.limiter(Map.of("algorithm", "gcra", "limit", "1000/s"))) {
      limiter.tryAcquire("k", 1);
      RateLimiter view = limiter.withTimeout(Duration.ofSeconds(10));
      TestRedis.pause(2000);
      try {
        long start = System.nanoTime();
        RateLimitException e = assertThrows(RateLimitException.class, () -> view.tryAcquire("k", 1));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(Status.TIMEOUT, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains("timeout_ms=" + DEADLINE_MS), e.getMessage());
        assertTrue(ms < DEADLINE_MS + SLACK_MS, "the store's timeout_ms was not kept: " + ms + " ms");
      } finally {
        TestRedis.awaitPauseEnd();
      }
    }
  }

  @Test
  void badTimeoutsAreRefusedAndMemoryStoresIgnoreThem() {
    try (Store store = Store.open("memory://")) {
      RateLimiter limiter = store.limiter(Map.of("limit", "2/s"));
      RateLimitException e =
          assertThrows(RateLimitException.class, () -> limiter.withTimeout(Duration.ofMillis(-1)));
      assertEquals(Status.INVALID_ARG, e.status());
      assertTrue(e.getMessage().contains("timeout: PT-0.001S is negative"), e.getMessage());
      assertThrows(NullPointerException.class, () -> limiter.withTimeout(null));
      // A sub-microsecond timeout rounds up, never down to "none".
      assertEquals(Duration.ofNanos(1000), limiter.withTimeout(Duration.ofNanos(1)).timeout());
      assertEquals(Duration.ZERO, limiter.withTimeout(Duration.ZERO).timeout());
      // memory:// never waits: a tiny deadline has nothing to cut short.
      RateLimiter view = limiter.withTimeout(Duration.ofNanos(1));
      assertTrue(view.tryAcquire("k", 1).allowed());
      assertTrue(view.tryAcquireAsync("k", 1).join().allowed());
      assertTrue(!view.tryAcquire("k", 1).allowed());
      // A view of a view keeps the first limiter as its owner.
      assertEquals(Duration.ofSeconds(1), view.withTimeout(Duration.ofSeconds(1)).timeout());
      limiter.close();
      assertEquals(Status.SHUTDOWN, assertThrows(RateLimitException.class, () -> view.peek("k", 0)).status());
    }
  }

  @Test
  void aWaitLongerThanLibrlKeepsIsItsLongest() {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter = store.limiter(Map.of("limit", "1/h"))) {
      // Beyond RL_MAX_WAIT_US (2^52 us, read from librl): "forever", not an error.
      Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
      assertTrue(limiter.acquire("k", 1, forever).allowed());
      assertTrue(!limiter.acquire("k", 1, forever).allowed(), "clock=manual: the first denial");
    }
  }

  /** call fails with TIMEOUT naming the request's deadline, after it and before the slack. */
  private static void timesOut(String what, Executable call) {
    long start = System.nanoTime();
    RateLimitException e = assertThrows(RateLimitException.class, call, what);
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.printf("deadline: %s failed with %s after %d ms%n", what, e.status(), ms);
    assertEquals(Status.TIMEOUT, e.status(), what + ": " + e.getMessage());
    assertTrue(e.getMessage().contains("timeout_us=" + DEADLINE_MS * 1000), what + ": " + e.getMessage());
    assertTrue(ms >= DEADLINE_MS - 1, what + " ended early: " + ms + " ms");
    assertTrue(ms < DEADLINE_MS + SLACK_MS, what + " took " + ms + " ms: the store's 5 s was used");
  }

  private static void timesOutAsync(Supplier<CompletableFuture<?>> call) {
    CompletionException e = assertThrows(CompletionException.class, () -> call.get().join());
    RateLimitException cause = (RateLimitException) e.getCause();
    assertEquals(Status.TIMEOUT, cause.status(), cause.getMessage());
  }
}
