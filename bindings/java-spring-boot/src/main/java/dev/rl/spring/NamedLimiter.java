package dev.rl.spring;

import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One configured limiter: the rl limiter, how a request maps to its key and cost, the paths the
 * filter limits, and the one answer every entry point gives (429 with the RateLimit fields, 503
 * for a store outage under on_failure=closed).
 */
public final class NamedLimiter {
  private final String name;
  private final RateLimiter limiter;
  private final RateLimitHeaders headers;
  private final Function<HttpServletRequest, String> key;
  private final long cost;
  private final List<String> paths;

  NamedLimiter(
      String name,
      RateLimiter limiter,
      Function<HttpServletRequest, String> key,
      long cost,
      List<String> paths) {
    this.name = name;
    this.limiter = limiter;
    this.headers = new RateLimitHeaders(limiter);
    this.key = key;
    this.cost = cost;
    this.paths = List.copyOf(paths);
  }

  public String name() {
    return name;
  }

  public RateLimiter limiter() {
    return limiter;
  }

  List<String> paths() {
    return paths;
  }

  long cost() {
    return cost;
  }

  /** The request attribute holding the decision a request got (a {@link Decision}). */
  public static final String DECISION_ATTRIBUTE = "dev.rl.spring.decision";

  /**
   * Decides the request: true to go on, false when the response was answered (429 or 503). Other
   * failures of rl are thrown, for the application's error handling.
   */
  boolean admit(HttpServletRequest request, HttpServletResponse response, long units)
      throws IOException {
    Decision decision;
    Map<String, String> fields;
    try {
      decision = limiter.tryAcquire(key.apply(request), units);
      fields = headers.of(decision); // none for fail_open: nothing was counted
    } catch (RateLimitException e) {
      if (!e.status().isOutage()) throw e;
      response.setStatus(503);
      response.setContentType("text/plain;charset=UTF-8");
      response.getWriter().write("Service Unavailable: rate limiter store unreachable\n");
      return false;
    }
    fields.forEach(response::setHeader);
    if (decision.allowed()) {
      request.setAttribute(DECISION_ATTRIBUTE, decision);
      return true;
    }
    response.setStatus(429);
    response.setContentType("text/plain;charset=UTF-8");
    response.getWriter().write("Too Many Requests\n");
    return false;
  }

  /** ip, header:Name or principal (else the address), as a function of the request. */
  static Function<HttpServletRequest, String> keyOf(String spec, String where) {
    Function<HttpServletRequest, String> address = HttpServletRequest::getRemoteAddr;
    if (spec == null || spec.equals("ip")) return address;
    if (spec.equals("principal")) {
      return r -> {
        Principal p = r.getUserPrincipal();
        return p != null ? "principal:" + p.getName() : r.getRemoteAddr();
      };
    }
    if (spec.startsWith("header:") && spec.length() > "header:".length()) {
      String header = spec.substring("header:".length());
      return r -> {
        String value = r.getHeader(header);
        return value != null && !value.isEmpty() ? value : r.getRemoteAddr();
      };
    }
    throw new IllegalArgumentException(
        where + ".key: '" + spec + "' is not ip, header:<Name> or principal");
  }
}
