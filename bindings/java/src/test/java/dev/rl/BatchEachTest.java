package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * acquireBatchEach and its async twin: a result per request, on memory://, on a store that is down
 * (every request fails alike, or on_failure decides each) and on the test Redis, where a key of the
 * wrong type fails its request alone.
 */
class BatchEachTest {
  private static final String DEAD_URL = "redis://127.0.0.1:1?clock=manual";

  /** The sync and the async form, each giving the list of results. */
  private static final List<BiFunction<RateLimiter, List<RateLimiter.Request>, List<RateLimiter.BatchResult>>>
      FORMS = List.of(RateLimiter::acquireBatchEach, (l, r) -> l.acquireBatchEachAsync(r).join());

  private static List<RateLimiter.Request> requests(Object... keysAndCosts) {
    List<RateLimiter.Request> out = new ArrayList<>();
    for (int i = 0; i < keysAndCosts.length; i += 2) {
      out.add(new RateLimiter.Request((String) keysAndCosts[i], (Integer) keysAndCosts[i + 1]));
    }
    return out;
  }

  @Test
  void memoryDecidesEveryRequest() {
    for (var form : FORMS) {
      try (Store store = Store.open("memory://?clock=manual");
          RateLimiter limiter = store.limiter(Map.of("limit", "2/s"))) {
        List<RateLimiter.BatchResult> results =
            form.apply(limiter, requests("a", 1, "a", 1, "a", 1, "b", 2));
        assertEquals(4, results.size());
        boolean[] allowed = {true, true, false, true}; // a denial is a decision, not an error
        for (int i = 0; i < 4; i++) {
          assertTrue(results.get(i).ok(), results.get(i).toString());
          assertNull(results.get(i).error());
          assertEquals(allowed[i], results.get(i).decision().allowed(), "request " + i);
        }
      }
    }
  }

  @Test
  void aMalformedBatchIsTheCallsFailure() {
    Store store = Store.open("memory://?clock=manual");
    RateLimiter limiter = store.limiter(Map.of("limit", "10/s"));
    try {
      RateLimitException e =
          assertThrows(RateLimitException.class, () -> limiter.acquireBatchEach(List.of()));
      assertTrue(e.getMessage().contains("count"), e.getMessage());
      e = assertThrows(RateLimitException.class, () -> limiter.acquireBatchEach(requests("k", 1, "", 1)));
      assertTrue(e.getMessage().contains("requests[1].key"), e.getMessage());
      CompletionException failed =
          assertThrows(
              CompletionException.class, () -> limiter.acquireBatchEachAsync(requests("k", 1, "k", 0)).join());
      e = (RateLimitException) failed.getCause();
      assertTrue(e.getMessage().contains("requests[1].cost"), e.getMessage());
      assertEquals(Status.INVALID_ARG, e.status());
      assertThrows(NullPointerException.class, () -> limiter.acquireBatchEach(null));
      assertEquals(10, limiter.peek("k", 0).remaining()); // nothing was decided
      store.close();
      e = assertThrows(RateLimitException.class, () -> limiter.acquireBatchEach(requests("k", 1)));
      assertEquals(Status.SHUTDOWN, e.status());
      CompletionException async =
          assertThrows(CompletionException.class, () -> limiter.acquireBatchEachAsync(requests("k", 1)).join());
      assertEquals(Status.SHUTDOWN, ((RateLimitException) async.getCause()).status());
    } finally {
      limiter.close();
      store.close();
    }
  }

  @Test
  void anOutageFailsEveryRequestWithItsStatus() {
    for (var form : FORMS) {
      try (Store store = Store.open(DEAD_URL);
          RateLimiter limiter = store.limiter(Map.of("limit", "5/s"))) {
        for (RateLimiter.BatchResult r : form.apply(limiter, requests("a", 1, "b", 1))) {
          assertFalse(r.ok());
          assertNull(r.decision());
          assertEquals(Status.BACKEND_UNAVAILABLE, r.error().status(), r.error().getMessage());
        }
      }
    }
  }

  @Test
  void onFailureOpenDecidesEveryRequest() {
    for (var form : FORMS) {
      try (Store store = Store.open(DEAD_URL);
          RateLimiter limiter = store.limiter(Map.of("limit", "5/s", "on_failure", "open"))) {
        for (RateLimiter.BatchResult r : form.apply(limiter, requests("a", 1, "b", 1))) {
          assertTrue(r.ok() && r.decision().allowed(), r.toString());
          assertEquals(Source.FAIL_OPEN, r.decision().source());
        }
      }
    }
  }

  private static String redisCli(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("redis-cli", "-u", TestRedis.url(), "--no-auth-warning"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertEquals(0, p.waitFor(), out);
    return out;
  }

  @Test
  void redisKeyOfTheWrongTypeFailsItsRequestAlone() throws Exception {
    for (var form : FORMS) {
      String prefix = "jteach" + ProcessHandle.current().pid() + "x" + System.nanoTime();
      try (Store store = Store.open(TestRedis.url() + "?prefix=" + prefix);
          RateLimiter limiter = store.limiter(Map.of("limit", "5/s", "name", "each"))) {
        limiter.tryAcquire("broken", 1);
        String[] keys = redisCli("--scan", "--pattern", prefix + ":*").split("\n");
        assertEquals(1, keys.length);
        redisCli("DEL", keys[0]);
        redisCli("SADD", keys[0], "x"); // a type no script reads
        List<RateLimiter.BatchResult> results =
            form.apply(limiter, requests("a", 1, "broken", 1, "b", 2));
        assertEquals(4, results.get(0).decision().remaining());
        assertEquals(3, results.get(2).decision().remaining());
        RateLimitException e = results.get(1).error();
        assertEquals(Status.BACKEND_ERROR, e.status());
        assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
      }
    }
  }
}
