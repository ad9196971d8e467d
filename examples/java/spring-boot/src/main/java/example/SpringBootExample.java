package example;

import dev.rl.Decision;
import dev.rl.spring.NamedLimiter;
import dev.rl.spring.RateLimited;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot application limited by rl's starter; application.yml holds the store and the
 * limiters. GET /hello: 5 a minute per API key (rl.limiters.api.paths); POST /bulk: 10 a minute
 * at a cost of 5 (the one annotation below). Run it (after bindings/java/run-tests installed
 * the starter into ~/.m2):
 *
 * <pre>
 * cd examples/java/spring-boot && mvn -q package dependency:build-classpath -Dmdep.outputFile=target/cp
 * RL_URL=redis://127.0.0.1:6379 java -cp target/classes:$(cat target/cp) example.SpringBootExample
 * curl -i -H 'X-Api-Key: alice' http://127.0.0.1:8080/hello    # the 6th within a minute: 429
 * </pre>
 */
@SpringBootApplication
public class SpringBootExample {
  public static void main(String[] args) {
    SpringApplication.run(SpringBootExample.class, args);
  }

  @EventListener
  void listening(WebServerInitializedEvent event) {
    System.out.println("listening on http://127.0.0.1:" + event.getWebServer().getPort());
  }

  @RestController
  static class Api {
    @GetMapping("/hello")
    Map<String, Long> hello(HttpServletRequest request) {
      Decision d = (Decision) request.getAttribute(NamedLimiter.DECISION_ATTRIBUTE);
      return Map.of("remaining", d.remaining());
    }

    @RateLimited(value = "bulk", cost = 5)
    @PostMapping("/bulk")
    Map<String, Boolean> bulk() {
      return Map.of("imported", true);
    }
  }
}
