package dev.rl.bench.frameworks;

import dev.rl.RateLimiter;
import dev.rl.spring.RateLimiters;
import java.util.Arrays;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * bench/frameworks' Spring Boot servlet app: /bare, /limited behind the starter's filter
 * (application.yml), /store?n=N timing N acquires of the same limiter.
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
    Map<String, Double> store(@RequestParam int n) {
      double[] took = new double[n];
      for (int i = 0; i < n; i++) {
        long began = System.nanoTime();
        limiter.tryAcquire("rtt" + i, 1);
        took[i] = (System.nanoTime() - began) / 1000.0;
      }
      Arrays.sort(took);
      double p50 = n % 2 == 1 ? took[n / 2] : (took[n / 2 - 1] + took[n / 2]) / 2;
      return Map.of("p50_us", p50, "p99_us", took[Math.min(n - 1, (int) (0.99 * n))]);
    }
  }
}
