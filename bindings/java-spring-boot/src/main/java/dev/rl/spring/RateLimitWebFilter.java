package dev.rl.spring;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The servlet filter's twin for WebFlux: limits each request whose path matches a limiter's paths,
 * by every such limiter in turn, with the same keys, fields and answers. The store call never
 * blocks the event loop: it is rl's async acquire, and the request goes on from its own event loop
 * on Reactor Netty (Reactor's parallel scheduler on other servers), never from rl's I/O thread
 * (which must stay free for other requests' replies); see {@link EventLoops}.
 */
public class RateLimitWebFilter implements WebFilter, Ordered {
  private final NamedLimiter[] limiters;

  public RateLimitWebFilter(RateLimiters limiters) {
    this.limiters = limiters.all().toArray(new NamedLimiter[0]);
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 100;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    String path = exchange.getRequest().getPath().pathWithinApplication().value();
    return admit(exchange, chain, path, 0);
  }

  /** Decides by the limiters from index next on that match path, in turn; then the chain. */
  private Mono<Void> admit(ServerWebExchange exchange, WebFilterChain chain, String path, int next) {
    for (int i = next; i < limiters.length; i++) {
      NamedLimiter l = limiters[i];
      if (l.matches(path)) {
        int after = i + 1;
        return admit(exchange, l, l.cost(), () -> admit(exchange, chain, path, after));
      }
    }
    return chain.filter(exchange);
  }

  /**
   * Decides the exchange by one limiter: then() when it may go on, else the 429 or 503 answer.
   * Other failures of rl are errors, for WebFlux's error handling.
   */
  static Mono<Void> admit(
      ServerWebExchange exchange, NamedLimiter l, long units, Supplier<Mono<Void>> then) {
    KeySource source = l.key();
    Mono<String> key =
        source.kind() == KeySource.Kind.PRINCIPAL
            ? exchange
                .getPrincipal()
                .map(p -> KeySource.principalKey(p.getName()))
                .defaultIfEmpty(address(exchange))
            : Mono.just(key(source, exchange));
    return key.flatMap(
        k ->
            Mono.fromFuture(
                    () -> l.decideAsync(k, units, EventLoops.of(exchange.getRequest())))
                .flatMap(answer -> respond(exchange, answer, then)));
  }

  private static Mono<Void> respond(
      ServerWebExchange exchange, NamedLimiter.Answer answer, Supplier<Mono<Void>> then) {
    ServerHttpResponse response = exchange.getResponse();
    answer.fields(response.getHeaders()::set);
    if (answer.proceeds()) {
      exchange.getAttributes().put(NamedLimiter.DECISION_ATTRIBUTE, answer.decision());
      return then.get();
    }
    response.setStatusCode(HttpStatus.valueOf(answer.status()));
    response.getHeaders().setContentType(TEXT);
    DataBuffer body = response.bufferFactory().wrap(answer.body().getBytes(StandardCharsets.UTF_8));
    return response.writeWith(Mono.just(body));
  }

  private static final MediaType TEXT = MediaType.parseMediaType("text/plain;charset=UTF-8");

  /** The key of an ip or header: source (the principal's is looked up by admit). */
  private static String key(KeySource source, ServerWebExchange exchange) {
    if (source.kind() == KeySource.Kind.HEADER) {
      String value = exchange.getRequest().getHeaders().getFirst(source.header());
      if (value != null && !value.isEmpty()) return value;
    }
    return address(exchange);
  }

  /** The client's address as the servlet filter's getRemoteAddr spells it. */
  private static String address(ServerWebExchange exchange) {
    InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
    return remote == null
        ? "unknown"
        : remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
  }
}
