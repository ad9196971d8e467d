package dev.rl.spring;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The servlet filter's twin for WebFlux: limits each request whose path matches a limiter's paths,
 * by every such limiter in turn, with the same keys, fields and answers. The store call never
 * blocks the event loop: it is rl's async acquire, and the request goes on from Reactor's parallel
 * scheduler, not from rl's I/O thread (which must stay free for other requests' replies).
 */
public class RateLimitWebFilter implements WebFilter, Ordered {
  private final RateLimiters limiters;
  private final AntPathMatcher matcher = new AntPathMatcher();

  public RateLimitWebFilter(RateLimiters limiters) {
    this.limiters = limiters;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 100;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    String path = exchange.getRequest().getPath().pathWithinApplication().value();
    List<NamedLimiter> matching =
        limiters.all().stream()
            .filter(l -> l.paths().stream().anyMatch(p -> matcher.match(p, path)))
            .toList();
    return admit(exchange, chain, matching, 0);
  }

  private Mono<Void> admit(
      ServerWebExchange exchange, WebFilterChain chain, List<NamedLimiter> matching, int next) {
    if (next == matching.size()) return chain.filter(exchange);
    NamedLimiter l = matching.get(next);
    return admit(exchange, l, l.cost(), () -> admit(exchange, chain, matching, next + 1));
  }

  /**
   * Decides the exchange by one limiter: then() when it may go on, else the 429 or 503 answer.
   * Other failures of rl are errors, for WebFlux's error handling.
   */
  static Mono<Void> admit(
      ServerWebExchange exchange, NamedLimiter l, long units, Supplier<Mono<Void>> then) {
    return key(l.key(), exchange)
        .flatMap(key -> Mono.fromFuture(() -> l.decideAsync(key, units)))
        .publishOn(Schedulers.parallel())
        .flatMap(
            answer -> {
              ServerHttpResponse response = exchange.getResponse();
              answer.fields().forEach(response.getHeaders()::set);
              if (answer.proceeds()) {
                exchange.getAttributes().put(NamedLimiter.DECISION_ATTRIBUTE, answer.decision());
                return then.get();
              }
              response.setStatusCode(HttpStatus.valueOf(answer.status()));
              response.getHeaders().setContentType(TEXT);
              DataBuffer body =
                  response.bufferFactory().wrap(answer.body().getBytes(StandardCharsets.UTF_8));
              return response.writeWith(Mono.just(body));
            });
  }

  private static final MediaType TEXT = MediaType.parseMediaType("text/plain;charset=UTF-8");

  /** The same keys as the servlet filter's (the address as getRemoteAddr spells it). */
  static Mono<String> key(KeySource source, ServerWebExchange exchange) {
    InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
    String address =
        remote == null
            ? "unknown"
            : remote.getAddress() != null
                ? remote.getAddress().getHostAddress()
                : remote.getHostString();
    return switch (source.kind()) {
      case IP -> Mono.just(address);
      case HEADER -> {
        String value = exchange.getRequest().getHeaders().getFirst(source.header());
        yield Mono.just(value != null && !value.isEmpty() ? value : address);
      }
      case PRINCIPAL ->
          exchange
              .getPrincipal()
              .map(p -> KeySource.principalKey(p.getName()))
              .defaultIfEmpty(address);
    };
  }
}
