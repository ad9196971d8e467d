package dev.rl.bench.frameworks.webflux;

import dev.rl.RateLimiter;
import dev.rl.spring.RateLimiters;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * bench/frameworks' Spring WebFlux app (Reactor Netty): /bare, /limited behind the starter's
 * WebFilter (application.yml, as the servlet app's), /store: the microseconds one async acquire of
 * the same limiter takes, from the call to its completion on rl's I/O thread (the filter's move
 * back to the request's event loop after it is part of what the integration adds; /store's reply
 * makes the same move, written from rl's I/O thread).
 */
@SpringBootApplication
public class WebFluxBench {
  public static void main(String[] args) {
    SpringApplication app = new SpringApplication(WebFluxBench.class);
    app.setWebApplicationType(WebApplicationType.REACTIVE); // the servlet stack is on the classpath too
    app.run(args);
  }

  /**
   * Reactor Netty, as the row says: Tomcat is on the classpath too (the servlet app), and Spring
   * Boot would serve the reactive app with it.
   */
  @Bean
  NettyReactiveWebServerFactory netty() {
    return new NettyReactiveWebServerFactory();
  }

  @EventListener
  void listening(WebServerInitializedEvent event) {
    System.out.println("listening on http://127.0.0.1:" + event.getWebServer().getPort());
  }

  @RestController
  static class Routes {
    private final RateLimiter limiter;

    Routes(RateLimiters limiters) {
      this.limiter = limiters.get("fw").limiter();
    }

    @GetMapping("/bare")
    String bare() {
      return "ok";
    }

    @GetMapping("/limited")
    String limited() {
      return "ok";
    }

    @GetMapping("/store")
    Mono<String> store(@RequestHeader("X-Api-Key") String key) {
      return Mono.defer(
          () -> {
            long began = System.nanoTime();
            return Mono.fromFuture(limiter.tryAcquireAsync(key, 1))
                .map(d -> Double.toString((System.nanoTime() - began) / 1000.0));
          });
    }
  }
}
