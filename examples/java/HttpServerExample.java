import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.rl.RateLimiter;
import dev.rl.Store;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An HTTP server (the JDK's HttpServer, no framework) rate limited by rl through {@link
 * RateLimitFilter}:
 *
 * <pre>
 *   java ... HttpServerExample [URL]      (URL default memory://; PORT default 8080, 0: any free one)
 *   curl -i -H 'X-Api-Key: alice' http://127.0.0.1:8080/hello
 * </pre>
 *
 * Each API key (or client address) may make 5 requests a minute; /bulk costs 5. Every call to the
 * store has a 50 ms deadline of its own (withTimeout): a stalled Redis costs a request at most
 * that, then 503. ON_FAILURE=open|local|closed (default closed) chooses what a store outage gives
 * (docs/failure.md); GET /metrics serves the store's Prometheus metrics.
 */
public final class HttpServerExample {
  public static void main(String[] args) throws IOException {
    String url = args.length > 0 ? args[0] : "memory://";
    int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
    String onFailure = System.getenv().getOrDefault("ON_FAILURE", "closed");
    Store store = Store.open(url);
    RateLimiter limiter =
        store.limiter(
            Map.of("algorithm", "gcra", "limit", "5/1m", "name", "api", "on_failure", onFailure));
    RateLimitFilter rateLimit =
        new RateLimitFilter(
            limiter.withTimeout(Duration.ofMillis(50)),
            HttpServerExample::keyOf,
            exchange -> exchange.getRequestURI().getPath().startsWith("/bulk") ? 5 : 1);

    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    ExecutorService workers = Executors.newFixedThreadPool(16);
    server.setExecutor(workers);
    HttpContext api = server.createContext("/", HttpServerExample::hello);
    api.getFilters().add(rateLimit);
    server.createContext(
        "/metrics", exchange -> RateLimitFilter.send(exchange, 200, store.metrics()));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop(0);
                  workers.shutdown();
                  store.close();
                }));
    server.start();
    System.out.printf(
        "listening on http://127.0.0.1:%d (store %s, %s)%n",
        server.getAddress().getPort(), url, rateLimit.description());
  }

  private static String keyOf(HttpExchange exchange) {
    String apiKey = exchange.getRequestHeaders().getFirst("X-Api-Key");
    return apiKey != null ? apiKey : exchange.getRemoteAddress().getAddress().getHostAddress();
  }

  private static void hello(HttpExchange exchange) throws IOException {
    RateLimitFilter.send(
        exchange, 200, "hello, " + keyOf(exchange) + " (" + exchange.getRequestURI().getPath() + ")\n");
  }
}
