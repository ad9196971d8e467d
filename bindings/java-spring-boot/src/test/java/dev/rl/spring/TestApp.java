package dev.rl.spring;

import dev.rl.Decision;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A web application with a path limited by configuration and a method by annotation. */
@SpringBootApplication
public class TestApp {
  @RestController
  static class Api {
    @GetMapping("/api/items")
    String items(HttpServletRequest request) {
      Decision d = (Decision) request.getAttribute(NamedLimiter.DECISION_ATTRIBUTE);
      return "remaining " + d.remaining();
    }

    @RateLimited(value = "bulk", cost = 5)
    @GetMapping("/bulk")
    String bulk() {
      return "bulk";
    }

    @GetMapping("/free")
    String free() {
      return "free";
    }
  }
}
