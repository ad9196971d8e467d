import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * A JDK HttpServer filter over an rl limiter: each request takes {@code cost(exchange)} units of
 * {@code key(exchange)}. It sets RateLimit-Policy and RateLimit (rl's {@link RateLimitHeaders},
 * rendered by librl: the same bytes as the Node and Go middleware), answers 429 with Retry-After
 * when denied, 503 when the store had an outage (on_failure=closed, a missed deadline), never 429,
 * and 500 for any other failure (a bad key, a closed store), as the Node and Go middleware do.
 * The decision is the exchange's attribute {@value #DECISION} for the handler.
 */
public final class RateLimitFilter extends Filter {
  public static final String DECISION = "rl.decision";

  private final RateLimiter limiter;
  private final RateLimitHeaders headers;
  private final Function<HttpExchange, String> key;
  private final ToLongFunction<HttpExchange> cost;

  public RateLimitFilter(
      RateLimiter limiter, Function<HttpExchange, String> key, ToLongFunction<HttpExchange> cost) {
    this.limiter = limiter;
    this.headers = new RateLimitHeaders(limiter);
    this.key = key;
    this.cost = cost;
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    Decision decision;
    try {
      decision = limiter.tryAcquire(key.apply(exchange), cost.applyAsLong(exchange));
    } catch (RateLimitException e) {
      if (e.status().isOutage()) {
        send(exchange, 503, "Service Unavailable: rate limiter store unreachable\n");
      } else {
        send(exchange, 500, "rate limiter failed: " + e.status().cName() + "\n");
      }
      return;
    }
    exchange.setAttribute(DECISION, decision);
    headers.of(decision).forEach(exchange.getResponseHeaders()::set);
    if (!decision.allowed()) {
      send(exchange, 429, "Too Many Requests\n");
      return;
    }
    chain.doFilter(exchange);
  }

  @Override
  public String description() {
    return "rl rate limit (" + headers.policy() + ")";
  }

  static void send(HttpExchange exchange, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
