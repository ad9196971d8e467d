package dev.rl.webfluxtest;

import dev.rl.Decision;
import dev.rl.spring.NamedLimiter;
import dev.rl.spring.RateLimited;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application with a path limited by configuration, a method by annotation (outside dev.rl.spring, so that the
 * servlet TestApp's component scan never sees its controller).
 */
@SpringBootApplication
public class ReactiveTestApp {
  @RestController
  static class Api {
    @GetMapping("/api/items")
    Mono<String> items(ServerWebExchange exchange) {
      Decision d = exchange.getAttribute(NamedLimiter.DECISION_ATTRIBUTE);
      return Mono.just("remaining " + d.remaining());
    }

    @RateLimited(value = "bulk", cost = 5)
    @GetMapping("/bulk")
    Mono<String> bulk() {
      return Mono.just("bulk");
    }

    /** The thread the handler runs on: never rl's I/O thread. */
    @GetMapping("/api/thread")
    Mono<String> thread() {
      return Mono.just(Thread.currentThread().getName());
    }

    @GetMapping("/free")
    Mono<String> free() {
      return Mono.just("free");
    }
  }
}
