package dev.rl.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.rl.RateLimiter;
import dev.rl.Store;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * StoreMetrics with real Micrometer: a Prometheus registry served over HTTP on loopback carries
 * the store's decisions exactly, under librl's names.
 */
class StoreMetricsTest {
  private static String redisUrl() {
    String url = System.getenv("RL_TEST_REDIS_URL");
    assertTrue(url != null && !url.isEmpty(), "RL_TEST_REDIS_URL is not set");
    return url + (url.contains("?") ? "&" : "?") + "prefix=jm" + System.nanoTime();
  }

  private static void decide(Store store, int allowed, int denied) {
    try (RateLimiter limiter =
        store.limiter(
            Map.of("algorithm", "gcra", "limit", allowed + "/h", "name", "m" + System.nanoTime()))) {
      for (int i = 0; i < allowed + denied; i++) limiter.tryAcquire("k");
    }
  }

  private static String scrape(PrometheusMeterRegistry registry) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/metrics",
        exchange -> {
          byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
    try {
      URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics");
      return HttpClient.newHttpClient()
          .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } finally {
      server.stop(0);
    }
  }

  private static void assertLine(String text, String line) {
    assertTrue(text.contains("\n" + line + "\n"), "the scrape lacks " + line + ":\n" + text);
  }

  @Test
  void oneStoreIsScrapedWithExactCountsOnMemoryAndRedis() throws Exception {
    for (String url : new String[] {"memory://", redisUrl()}) {
      try (Store store = Store.open(url)) {
        decide(store, 3, 2);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new StoreMetrics(store).bindTo(registry);
        String text = scrape(registry);
        assertLine(text, "rl_decisions_total{source=\"store\",verdict=\"allowed\"} 3.0");
        assertLine(text, "rl_decisions_total{source=\"store\",verdict=\"denied\"} 2.0");
        assertLine(text, "rl_breaker_state 0.0");
        if (!url.startsWith("memory")) {
          assertLine(text, "rl_store_round_trip_seconds_count 5");
        }
        // Later decisions show at the next scrape.
        decide(store, 1, 0);
        assertLine(scrape(registry), "rl_decisions_total{source=\"store\",verdict=\"allowed\"} 4.0");
      }
    }
  }

  @Test
  void severalStoresShareOneRegistryByTag() throws Exception {
    try (Store edge = Store.open("memory://");
        Store main = Store.open(redisUrl())) {
      decide(edge, 1, 0);
      decide(main, 2, 1);
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      new StoreMetrics(edge, Tags.of("store", "edge")).bindTo(registry);
      new StoreMetrics(main, Tags.of("store", "main")).bindTo(registry);
      String text = scrape(registry);
      assertLine(text, "rl_decisions_total{source=\"store\",store=\"edge\",verdict=\"allowed\"} 1.0");
      assertLine(text, "rl_decisions_total{source=\"store\",store=\"main\",verdict=\"allowed\"} 2.0");
      assertLine(text, "rl_decisions_total{source=\"store\",store=\"main\",verdict=\"denied\"} 1.0");
    }
  }

  @Test
  void theExpositionParsesAsLibrlWritesIt() {
    Map<String, StoreMetrics.Family> f =
        StoreMetrics.Exposition.parse(
            "# HELP a_total A \\\\ help\\nline.\n# TYPE a_total counter\n"
                + "a_total{x=\"q\\\"uote\",y=\"b\\\\s\"} 2\n"
                + "# TYPE s summary\ns{quantile=\"0.5\"} 0.001\ns_sum 0.5\ns_count 7\n");
    assertEquals("A \\ help\nline.", f.get("a_total").help());
    assertEquals(Map.of("x", "q\"uote", "y", "b\\s"), f.get("a_total").samples().get(0).labels());
    assertEquals(3, f.get("s").samples().size());
    assertEquals(7.0, f.get("s").samples().get(2).value());
  }
}
