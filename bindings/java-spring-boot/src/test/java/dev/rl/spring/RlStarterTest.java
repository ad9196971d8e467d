package dev.rl.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter in real Spring Boot applications (embedded Tomcat on loopback, random ports)
 * answering real HTTP requests, configured only by properties: a path limited by
 * rl.limiters.api.paths, a method by @RateLimited, an unreachable store, two applications sharing
 * one limit on Redis, and bad settings refused at startup naming them.
 */
class RlStarterTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
    for (String p : properties) args.add("--" + p);
    return SpringApplication.run(TestApp.class, args.toArray(String[]::new));
  }

  private static int port(ConfigurableApplicationContext context) {
    return ((ServletWebServerApplicationContext) context).getWebServer().getPort();
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext app, String path, String apiKey)
      throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(app) + path))
        .header("X-Api-Key", apiKey).build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static final String[] MEMORY_APP = {
    "rl.url=memory://?clock=manual",
    "rl.limiters.api.limit=5/1m", "rl.limiters.api.key=header:X-Api-Key", "rl.limiters.api.paths=/api/**",
    "rl.limiters.bulk.limit=10/1m", "rl.limiters.bulk.algorithm=fixed_window",
  };

  @Test
  void aConfiguredPathIsLimitedWithTheRateLimitFields() throws Exception {
    try (ConfigurableApplicationContext app = start(MEMORY_APP)) {
      for (int i = 1; i <= 5; i++) {
        HttpResponse<String> r = get(app, "/api/items", "alice");
        assertEquals(200, r.statusCode(), "request " + i);
        assertEquals("remaining " + (5 - i), r.body());
        assertEquals("\"api\";q=5;w=60", r.headers().firstValue("RateLimit-Policy").orElse(""));
        assertEquals("\"api\";r=" + (5 - i) + ";t=" + (12 * i), r.headers().firstValue("RateLimit").orElse(""));
      }
      HttpResponse<String> denied = get(app, "/api/items", "alice");
      assertEquals(429, denied.statusCode());
      assertEquals("12", denied.headers().firstValue("Retry-After").orElse(""));
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> free = get(app, "/free", "alice");
        assertEquals(200, free.statusCode());
        assertFalse(free.headers().firstValue("RateLimit").isPresent());
      }
    }
  }

  @Test
  void anAnnotatedMethodHasItsOwnLimitAndCost() throws Exception {
    try (ConfigurableApplicationContext app = start(MEMORY_APP)) {
      assertEquals(200, get(app, "/bulk", "bob").statusCode());
      HttpResponse<String> second = get(app, "/bulk", "bob");
      assertEquals(200, second.statusCode());
      assertEquals("\"bulk\";q=10;w=60", second.headers().firstValue("RateLimit-Policy").orElse(""));
      assertEquals(429, get(app, "/bulk", "bob").statusCode());
    }
  }

  @Test
  void anUnreachableStoreIs503AndOpenLetsRequestsThrough() throws Exception {
    String down = "rl.url=redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0";
    try (ConfigurableApplicationContext app = start(down, "rl.limiters.api.limit=5/1m",
        "rl.limiters.api.paths=/api/**", "rl.limiters.open.limit=5/1m", "rl.limiters.open.on-failure=open",
        "rl.limiters.open.paths=/free")) {
      HttpResponse<String> closed = get(app, "/api/items", "carol");
      assertEquals(503, closed.statusCode());
      assertTrue(closed.body().contains("store unreachable"));
      HttpResponse<String> open = get(app, "/free", "carol");
      assertEquals(200, open.statusCode());
      assertFalse(open.headers().firstValue("RateLimit").isPresent());
    }
  }

  @Test
  void twoApplicationsOnOneRedisShareOneLimit() throws Exception {
    String url = System.getenv("RL_TEST_REDIS_URL");
    assertTrue(url != null && !url.isEmpty(), "RL_TEST_REDIS_URL is not set");
    String name = "spring" + System.nanoTime();
    String[] props = {"rl.url=" + url, "rl.limiters." + name + ".limit=5/1m",
        "rl.limiters." + name + ".key=header:X-Api-Key", "rl.limiters." + name + ".paths=/api/**"};
    try (ConfigurableApplicationContext a = start(props); ConfigurableApplicationContext b = start(props)) {
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 7; i++) statuses.add(get(i % 2 == 0 ? a : b, "/api/items", "dave").statusCode());
      assertEquals(List.of(200, 200, 200, 200, 200, 429, 429), statuses);
    }
  }

  @Test
  void badSettingsStopStartupNamingThem() {
    Exception limit = assertThrows(Exception.class, () -> start("rl.limiters.api.limit=bogus").close());
    assertTrue(rootMessages(limit).contains("rl.limiters.api: "), rootMessages(limit));
    assertTrue(rootMessages(limit).contains("bogus"), rootMessages(limit));
    Exception key = assertThrows(Exception.class,
        () -> start("rl.limiters.api.limit=5/s", "rl.limiters.api.key=cookie").close());
    assertTrue(rootMessages(key).contains("rl.limiters.api.key: 'cookie' is not"), rootMessages(key));
  }

  private static String rootMessages(Throwable t) {
    StringBuilder out = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) out.append(c.getMessage()).append(" | ");
    return out.toString();
  }
}
