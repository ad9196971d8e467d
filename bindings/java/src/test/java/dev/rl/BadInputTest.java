package dev.rl;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad input to every method gives the documented exception: RateLimitException with the status
 * every binding gives (INVALID_ARG, SHUTDOWN), NullPointerException naming a null argument; never
 * a crash (the suite runs under -Xcheck:jni).
 */
class BadInputTest {
  private static final String LONG_KEY = "x".repeat(513);
  private Store store;
  private RateLimiter limiter;

  @BeforeEach
  void open() {
    store = Store.open("memory://?clock=manual");
    limiter = store.limiter(Map.of("limit", "10/s"));
  }

  @AfterEach
  void close() {
    limiter.close();
    store.close();
  }

  private static void invalid(String messagePart, Executable call) {
    RateLimitException e = assertThrows(RateLimitException.class, call);
    assertEquals(Status.INVALID_ARG, e.status(), e.getMessage());
    assertTrue(e.getMessage().contains(messagePart), e.getMessage());
  }

  private static void invalidAsync(String messagePart, Supplier<CompletableFuture<?>> call) {
    CompletionException e = assertThrows(CompletionException.class, () -> call.get().join());
    RateLimitException cause = (RateLimitException) e.getCause();
    assertEquals(Status.INVALID_ARG, cause.status(), cause.getMessage());
    assertTrue(cause.getMessage().contains(messagePart), cause.getMessage());
  }

  @Test
  void storesRefuseBadUrlsAndSettings() {
    invalid("url", () -> Store.open("nosuch://x"));
    invalid("timeout_ms", () -> Store.open("memory://?timeout_ms=-1"));
    invalid("limit", () -> store.limiter(Map.of("algorithm", "gcra")));
    invalid("algorithm", () -> store.limiter(Map.of("algorithm", "nosuch", "limit", "1/s")));
    invalid("clock", () -> Store.open("memory://").clockAdvance(1));
    invalid("", () -> store.clockAdvance(-1));
    assertThrows(NullPointerException.class, () -> Store.open(null));
    assertThrows(NullPointerException.class, () -> store.limiter(null));
    assertThrows(
        NullPointerException.class, () -> store.limiter(Collections.singletonMap("limit", null)));
  }

  // librl reads URLs and settings as C strings: a U+0000 in one is refused by name, as in every
  // binding (librl's rl_text_check), never cut short ("api\0evil" is not "api").
  @Test
  void aNulInAUrlOrSettingIsRefusedByName() {
    nul("url", () -> Store.open("memory://\0"));
    nul("url", () -> Store.open("memory://?clock=manual\0x"));
    nul("limit", () -> store.limiter(Map.of("limit", "1/s\0junk")));
    nul("name", () -> store.limiter(Map.of("limit", "1/s", "name", "api\0evil")));
    nul("limiter settings key", () -> store.limiter(Map.of("limit", "1/s", "na\0me", "x")));
  }

  private static void nul(String what, Executable call) {
    RateLimitException e = assertThrows(RateLimitException.class, call);
    assertEquals(Status.INVALID_ARG, e.status(), e.getMessage());
    assertEquals("RL_E_INVALID_ARG: " + what + ": contains a NUL byte", e.getMessage());
  }

  // Text reaches librl as standard UTF-8, not JNI's modified UTF-8 (U+1F600 as two 3-byte
  // surrogates); librl's message shows the bytes it got.
  @Test
  void settingsReachLibrlAsStandardUtf8() {
    invalid(
        "name: 'caf\\xc3\\xa9 \\xf0\\x9f\\x98\\x80'",
        () -> store.limiter(Map.of("limit", "1/s", "name", "caf\u00e9 \ud83d\ude00")));
  }

  // Keys are bytes with a length: a NUL is part of the key, never its end (as in every binding).
  @Test
  void keysHoldingNulAreWholeKeys() {
    try (RateLimiter one = store.limiter(Map.of("limit", "1/s"))) {
      assertTrue(one.tryAcquire("api\0evil").allowed());
      assertTrue(one.tryAcquire("api").allowed());
      assertTrue(one.tryAcquire("api\0other").allowed());
      assertTrue(!one.tryAcquire("api\0evil").allowed());
      assertTrue(!one.tryAcquireAsync("api\0evil".getBytes(UTF_8), 1).join().allowed());
    }
  }

  @Test
  void everyCallRefusesBadKeysAndCosts() {
    invalid("key", () -> limiter.tryAcquire("", 1));
    invalid("key", () -> limiter.tryAcquire(LONG_KEY, 1));
    invalid("cost", () -> limiter.tryAcquire("k", 0));
    invalid("cost", () -> limiter.tryAcquire(new byte[] {1}, -1));
    invalid("key", () -> limiter.peek("", 1));
    invalid("cost", () -> limiter.peek("k", -1));
    invalid("key", () -> limiter.refund(LONG_KEY, 1));
    invalid("cost", () -> limiter.refund("k", 0));
    invalid("key", () -> limiter.reset(""));
    invalid("key", () -> limiter.acquire("", 1, Duration.ZERO));
    invalid("cost", () -> limiter.acquire("k", 0, Duration.ZERO));
    invalid("timeout", () -> limiter.acquire("k", 1, Duration.ofMillis(-1)));
    invalid("", () -> limiter.acquireBatch(List.of()));
    invalid("cost", () -> limiter.acquireBatch(List.of(new RateLimiter.Request("k", 0))));
    List<RateLimiter.Request> tooMany = new ArrayList<>();
    for (int i = 0; i <= 65536; i++) tooMany.add(new RateLimiter.Request("k", 1));
    invalid("", () -> limiter.acquireBatch(tooMany));
  }

  @Test
  void everyAsyncCallFailsItsFuture() {
    invalidAsync("key", () -> limiter.tryAcquireAsync("", 1));
    invalidAsync("cost", () -> limiter.tryAcquireAsync("k", 0));
    invalidAsync("cost", () -> limiter.peekAsync("k", -1));
    invalidAsync("key", () -> limiter.refundAsync(LONG_KEY, 1));
    invalidAsync("key", () -> limiter.resetAsync(""));
    invalidAsync("timeout", () -> limiter.acquireAsync("k", 1, Duration.ofSeconds(-1)));
    invalidAsync("cost", () -> limiter.acquireAsync("k", 0, Duration.ZERO));
    invalidAsync("", () -> limiter.acquireBatchAsync(List.of()));
  }

  @Test
  void nullArgumentsAreNullPointerExceptions() {
    List<Executable> calls =
        List.of(
            () -> limiter.tryAcquire((String) null, 1),
            () -> limiter.tryAcquire((byte[]) null, 1),
            () -> limiter.peek((String) null, 1),
            () -> limiter.refund((String) null, 1),
            () -> limiter.reset((String) null),
            () -> limiter.acquire(null, 1, Duration.ZERO),
            () -> limiter.acquire("k", 1, null),
            () -> limiter.acquireBatch(null),
            () -> limiter.acquireBatch(Collections.singletonList(null)),
            () -> limiter.peek((byte[]) null, 1),
            () -> limiter.refund((byte[]) null, 1),
            () -> limiter.reset((byte[]) null),
            () -> limiter.tryAcquireAsync((String) null, 1),
            () -> limiter.tryAcquireAsync((byte[]) null, 1),
            () -> limiter.peekAsync((String) null, 1),
            () -> limiter.peekAsync((byte[]) null, 1),
            () -> limiter.refundAsync((String) null, 1),
            () -> limiter.refundAsync((byte[]) null, 1),
            () -> limiter.resetAsync((String) null),
            () -> limiter.resetAsync((byte[]) null),
            () -> limiter.acquireAsync(null, 1, Duration.ZERO),
            () -> limiter.acquireAsync("k", 1, null),
            () -> limiter.acquireBatchAsync(null));
    for (Executable call : calls) assertThrows(NullPointerException.class, call);
  }

  @Test
  void callsAfterCloseAreShutdown() {
    store.close();
    store.close(); // idempotent
    RateLimitException e = assertThrows(RateLimitException.class, () -> limiter.tryAcquire("k", 1));
    assertEquals(Status.SHUTDOWN, e.status());
    CompletionException async =
        assertThrows(CompletionException.class, () -> limiter.tryAcquireAsync("k", 1).join());
    assertEquals(Status.SHUTDOWN, ((RateLimitException) async.getCause()).status());
    assertEquals(
        Status.SHUTDOWN, assertThrows(RateLimitException.class, store::stats).status());
    limiter.close();
    limiter.close(); // idempotent
    assertEquals(
        Status.SHUTDOWN,
        assertThrows(RateLimitException.class, () -> limiter.peek("k", 1)).status());
  }
}
