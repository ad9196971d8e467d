package dev.rl.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rl.webfluxtest.ReactiveTestApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's WebFlux filter in real reactive Spring Boot applications (Reactor Netty on
 * loopback, random ports) answering real HTTP requests: the Nth+1 request limited with the
 * RateLimit fields, an annotated method with its own limit and cost, an unreachable store under
 * closed and open, two reactive applications (and a reactive and a servlet one) sharing one limit
 * on Redis, and a bad setting refused at startup naming it.
 */
class RlWebFluxTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--spring.main.web-application-type=reactive",
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN"));
    for (String p : properties) args.add("--" + p);
    return SpringApplication.run(ReactiveTestApp.class, args.toArray(String[]::new));
  }

  private static HttpResponse<String> get(
      ConfigurableApplicationContext app, String path, String apiKey) throws Exception {
    String port = app.getEnvironment().getProperty("local.server.port");
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("X-Api-Key", apiKey)
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theReactiveApplicationGetsTheWebFilterNotTheServletFilter() {
    try (ConfigurableApplicationContext app = start("rl.url=memory://?clock=manual")) {
      assertEquals(1, app.getBeansOfType(RateLimitWebFilter.class).size());
      assertEquals(1, app.getBeansOfType(RateLimitedWebFilter.class).size());
      assertTrue(app.getBeansOfType(RateLimitedInterceptor.class).isEmpty());
    }
  }

  @Test
  void theNthPlusOneRequestIsLimitedWithTheRateLimitFields() throws Exception {
    try (ConfigurableApplicationContext app =
        start(
            "rl.url=memory://?clock=manual",
            "rl.limiters.api.limit=5/1m",
            "rl.limiters.api.key=header:X-Api-Key",
            "rl.limiters.api.paths=/api/items")) {
      for (int i = 1; i <= 5; i++) {
        HttpResponse<String> r = get(app, "/api/items", "alice");
        assertEquals(200, r.statusCode(), "request " + i);
        assertEquals("remaining " + (5 - i), r.body());
        assertEquals("\"api\";q=5;w=60", r.headers().firstValue("RateLimit-Policy").orElse(""));
        assertEquals(
            "\"api\";r=" + (5 - i) + ";t=" + (12 * i),
            r.headers().firstValue("RateLimit").orElse(""));
      }
      HttpResponse<String> denied = get(app, "/api/items", "alice");
      assertEquals(429, denied.statusCode());
      assertEquals("Too Many Requests\n", denied.body());
      assertEquals("12", denied.headers().firstValue("Retry-After").orElse(""));
      assertEquals(200, get(app, "/api/items", "bob").statusCode(), "another key");
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> free = get(app, "/free", "alice");
        assertEquals(200, free.statusCode());
        assertFalse(free.headers().firstValue("RateLimit").isPresent());
      }
    }
  }

  @Test
  void anAnnotatedMethodHasItsOwnLimitAndCost() throws Exception {
    try (ConfigurableApplicationContext app =
        start(
            "rl.url=memory://?clock=manual",
            "rl.limiters.bulk.limit=10/1m",
            "rl.limiters.bulk.algorithm=fixed_window",
            "rl.limiters.bulk.key=header:X-Api-Key")) {
      assertEquals(200, get(app, "/bulk", "bob").statusCode());
      HttpResponse<String> second = get(app, "/bulk", "bob");
      assertEquals(200, second.statusCode());
      assertEquals("bulk", second.body());
      assertEquals(
          "\"bulk\";q=10;w=60", second.headers().firstValue("RateLimit-Policy").orElse(""));
      HttpResponse<String> third = get(app, "/bulk", "bob");
      assertEquals(429, third.statusCode());
      assertTrue(third.headers().firstValue("Retry-After").isPresent());
      assertEquals(404, get(app, "/nowhere", "bob").statusCode(), "no handler: WebFlux's 404");
    }
  }

  @Test
  void handlersRunOffRlsIoThread() throws Exception {
    try (ConfigurableApplicationContext app =
        start("rl.url=memory://?clock=manual", "rl.limiters.api.limit=5/1m",
            "rl.limiters.api.paths=/api/**")) {
      HttpResponse<String> r = get(app, "/api/thread", "erin");
      assertEquals(200, r.statusCode());
      // The request's own event loop: where WebFlux runs it without the filter.
      assertTrue(r.body().startsWith("reactor-http-"), r.body());
    }
  }

  @Test
  void onAnotherServerHandlersRunOnReactorsParallelScheduler() throws Exception {
    try (ConfigurableApplicationContext app =
        start("test.server=tomcat", "rl.url=memory://?clock=manual", "rl.limiters.api.limit=5/1m",
            "rl.limiters.api.paths=/api/**")) {
      HttpResponse<String> r = get(app, "/api/thread", "erin");
      assertEquals(200, r.statusCode());
      assertTrue(r.body().startsWith("parallel-"), r.body());
      assertEquals("\"api\";r=4;t=12", r.headers().firstValue("RateLimit").orElseThrow());
    }
  }

  @Test
  void anUnreachableStoreIs503AndOpenLetsRequestsThrough() throws Exception {
    String down =
        "rl.url=redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0";
    try (ConfigurableApplicationContext app =
        start(
            down,
            "rl.limiters.api.limit=5/1m",
            "rl.limiters.api.paths=/api/**",
            "rl.limiters.open.limit=5/1m",
            "rl.limiters.open.on-failure=open",
            "rl.limiters.open.paths=/free")) {
      HttpResponse<String> closed = get(app, "/api/items", "carol");
      assertEquals(503, closed.statusCode());
      assertTrue(closed.body().contains("store unreachable"), closed.body());
      assertFalse(closed.headers().firstValue("RateLimit").isPresent());
      HttpResponse<String> open = get(app, "/free", "carol");
      assertEquals(200, open.statusCode());
      assertEquals("free", open.body());
      assertFalse(open.headers().firstValue("RateLimit").isPresent());
    }
  }

  @Test
  void twoApplicationsOnOneRedisShareOneLimit() throws Exception {
    String url = System.getenv("RL_TEST_REDIS_URL");
    assertTrue(url != null && !url.isEmpty(), "RL_TEST_REDIS_URL is not set");
    String name = "webflux" + System.nanoTime();
    String[] props = {
      "rl.url=" + url,
      "rl.limiters." + name + ".limit=5/1m",
      "rl.limiters." + name + ".key=header:X-Api-Key",
      "rl.limiters." + name + ".paths=/api/**"
    };
    try (ConfigurableApplicationContext a = start(props);
        ConfigurableApplicationContext b = start(props)) {
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        statuses.add(get(i % 2 == 0 ? a : b, "/api/items", "dave").statusCode());
      }
      assertEquals(List.of(200, 200, 200, 200, 200, 429, 429), statuses);
    }
  }

  @Test
  void aServletAndAReactiveApplicationShareOneLimit() throws Exception {
    String url = System.getenv("RL_TEST_REDIS_URL");
    assertTrue(url != null && !url.isEmpty(), "RL_TEST_REDIS_URL is not set");
    String name = "mixed" + System.nanoTime();
    String[] props = {
      "rl.url=" + url,
      "rl.limiters." + name + ".limit=5/1m",
      "rl.limiters." + name + ".key=header:X-Api-Key",
      "rl.limiters." + name + ".paths=/api/items"
    };
    List<String> servletArgs =
        new ArrayList<>(
            List.of(
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN"));
    for (String p : props) servletArgs.add("--" + p);
    try (ConfigurableApplicationContext reactive = start(props);
        ConfigurableApplicationContext servlet =
            SpringApplication.run(TestApp.class, servletArgs.toArray(String[]::new))) {
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        statuses.add(get(i % 2 == 0 ? reactive : servlet, "/api/items", "erin").statusCode());
      }
      assertEquals(List.of(200, 200, 200, 200, 200, 429, 429), statuses);
    }
  }

  @Test
  void badSettingsStopStartupNamingThem() {
    Exception limit =
        assertThrows(Exception.class, () -> start("rl.limiters.api.limit=bogus").close());
    assertTrue(rootMessages(limit).contains("rl.limiters.api: "), rootMessages(limit));
    assertTrue(rootMessages(limit).contains("bogus"), rootMessages(limit));
    Exception key =
        assertThrows(
            Exception.class,
            () -> start("rl.limiters.api.limit=5/s", "rl.limiters.api.key=cookie").close());
    assertTrue(
        rootMessages(key).contains("rl.limiters.api.key: 'cookie' is not"), rootMessages(key));
  }

  private static String rootMessages(Throwable t) {
    StringBuilder out = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) out.append(c.getMessage()).append(" | ");
    return out.toString();
  }
}
