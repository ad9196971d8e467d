package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The header fields match the Node and Go middleware's, from the limits rl parsed. */
class RateLimitHeadersTest {
  private static long number(Object value) {
    return ((Number) value).longValue();
  }

  private static Duration micros(long us) {
    return us < 0 ? Decision.NEVER : Duration.of(us, ChronoUnit.MICROS);
  }

  /**
   * Every decision of conformance/http/headers.yaml, the table the C++, Node and Go tests read
   * too: exactly its fields, byte for byte.
   */
  @Test
  @SuppressWarnings("unchecked")
  void everyDecisionOfTheSharedTable() throws IOException {
    Path file =
        Path.of(System.getProperty("rl.root", "../.."), "conformance", "http", "headers.yaml");
    Map<String, Object> table;
    try (Reader reader = Files.newBufferedReader(file)) {
      table = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
    }
    List<Map<String, Object>> cases = (List<Map<String, Object>>) table.get("cases");
    assertTrue(cases.size() >= 20, file + " has " + cases.size() + " cases");
    for (Map<String, Object> c : cases) {
      String name = (String) c.get("name");
      Map<String, Object> limiter = (Map<String, Object>) c.get("limiter");
      List<Limit> limits = new ArrayList<>();
      for (Map<String, Object> l : (List<Map<String, Object>>) limiter.get("limits")) {
        limits.add(new Limit(number(l.get("limit")), micros(number(l.get("window_us"))), 0));
      }
      Map<String, Object> d = (Map<String, Object>) c.get("decision");
      Decision decision =
          new Decision(
              (Boolean) d.get("allowed"),
              0,
              number(d.get("remaining")),
              micros(number(d.get("retry_after_us"))),
              micros(number(d.get("reset_after_us"))),
              Source.valueOf(((String) d.get("source")).toUpperCase()),
              (int) number(d.get("limit_index")),
              0);
      if (c.containsKey("error")) {
        RateLimitException e =
            assertThrows(
                RateLimitException.class,
                () -> new RateLimitHeaders((String) limiter.get("name"), limits).of(decision),
                name);
        assertEquals(Status.INVALID_ARG, e.status(), name);
        assertTrue(e.getMessage().contains((String) c.get("error")), name + ": " + e.getMessage());
        continue;
      }
      assertEquals(
          c.get("headers"),
          new RateLimitHeaders((String) limiter.get("name"), limits).of(decision),
          name);
    }
  }

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
