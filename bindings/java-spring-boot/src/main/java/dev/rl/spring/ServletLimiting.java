package dev.rl.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;

/** A limiter's answer on a servlet request: its key, and the response it writes. */
final class ServletLimiting {
  private ServletLimiting() {}

  static String key(KeySource source, HttpServletRequest request) {
    return switch (source.kind()) {
      case IP -> request.getRemoteAddr();
      case HEADER -> {
        String value = request.getHeader(source.header());
        yield value != null && !value.isEmpty() ? value : request.getRemoteAddr();
      }
      case PRINCIPAL -> {
        Principal p = request.getUserPrincipal();
        yield p != null ? KeySource.principalKey(p.getName()) : request.getRemoteAddr();
      }
    };
  }

  /**
   * Decides the request: true to go on, false when the response was answered (429 or 503). Other
   * failures of rl are thrown, for the application's error handling.
   */
  static boolean admit(
      NamedLimiter limiter, HttpServletRequest request, HttpServletResponse response, long units)
      throws IOException {
    NamedLimiter.Answer answer = limiter.decide(key(limiter.key(), request), units);
    answer.fields(response::setHeader);
    if (answer.proceeds()) {
      request.setAttribute(NamedLimiter.DECISION_ATTRIBUTE, answer.decision());
      return true;
    }
    response.setStatus(answer.status());
    response.setContentType("text/plain;charset=UTF-8");
    response.getWriter().write(answer.body());
    return false;
  }
}
