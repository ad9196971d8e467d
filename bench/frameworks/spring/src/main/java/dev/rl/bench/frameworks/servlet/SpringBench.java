package dev.rl.bench.frameworks.servlet;

import dev.rl.RateLimiter;
import dev.rl.spring.RateLimiters;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * bench/frameworks' Spring Boot servlet app: /bare, /limited behind the starter's filter
 * (application.yml), /store: the microseconds one acquire of the same limiter takes, timed in
 * the app.
 */
@SpringBootApplication
public class SpringBench {
  public static void main(String[] args) {
    SpringApplication.run(SpringBench.class, args);
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
    String store(@RequestHeader("X-Api-Key") String key) {
      long began = System.nanoTime();
      limiter.tryAcquire(key, 1);
      return Double.toString((System.nanoTime() - began) / 1000.0);
    }
  }
}
