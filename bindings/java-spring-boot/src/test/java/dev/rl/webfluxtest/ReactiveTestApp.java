package dev.rl.webfluxtest;

import dev.rl.Decision;
import dev.rl.spring.NamedLimiter;
import dev.rl.spring.RateLimited;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.embedded.tomcat.TomcatReactiveWebServerFactory;
import org.springframework.context.annotation.Bean;
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
  // Tomcat is on the test classpath too (the servlet tests), and Spring Boot prefers it: the server
  // is chosen here, Reactor Netty unless test.server=tomcat.
  @Bean
  @ConditionalOnProperty(name = "test.server", havingValue = "netty", matchIfMissing = true)
  NettyReactiveWebServerFactory netty() {
    return new NettyReactiveWebServerFactory();
  }

  @Bean
  @ConditionalOnProperty(name = "test.server", havingValue = "tomcat")
  TomcatReactiveWebServerFactory tomcat() {
    return new TomcatReactiveWebServerFactory();
  }

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
