package dev.rl.spring;

import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * {@link RateLimited} handler methods in a WebFlux application: the handler is looked up with the
 * application's own RequestMappingHandlerMapping (DispatcherHandler looks it up again after the
 * filters), and an annotated one is decided as the path filter decides.
 */
public class RateLimitedWebFilter implements WebFilter, Ordered {
  private final RateLimiters limiters;
  private final ObjectProvider<RequestMappingHandlerMapping> mapping;

  public RateLimitedWebFilter(
      RateLimiters limiters, ObjectProvider<RequestMappingHandlerMapping> mapping) {
    this.limiters = limiters;
    this.mapping = mapping;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE + 101; // after the path filter, as in the servlet stack
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    RequestMappingHandlerMapping handlers = mapping.getIfAvailable();
    if (handlers == null) return chain.filter(exchange);
    return handlers
        .getHandler(exchange)
        .map(Optional::of)
        // No handler, or no match (405, 415, ...): DispatcherHandler answers that itself.
        .onErrorResume(e -> Mono.just(Optional.empty()))
        .defaultIfEmpty(Optional.empty())
        .flatMap(
            handler -> {
              RateLimited limit =
                  handler.filter(HandlerMethod.class::isInstance)
                      .map(h -> annotation((HandlerMethod) h))
                      .orElse(null);
              if (limit == null) return chain.filter(exchange);
              NamedLimiter l = limiters.get(limit.value());
              long units = limit.cost() > 0 ? limit.cost() : l.cost();
              return RateLimitWebFilter.admit(exchange, l, units, () -> chain.filter(exchange));
            });
  }

  private static RateLimited annotation(HandlerMethod method) {
    RateLimited limit =
        AnnotatedElementUtils.findMergedAnnotation(method.getMethod(), RateLimited.class);
    return limit != null
        ? limit
        : AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), RateLimited.class);
  }
}
