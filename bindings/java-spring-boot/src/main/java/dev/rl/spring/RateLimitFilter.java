package dev.rl.spring;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/** Limits each request whose path matches a limiter's paths, by every such limiter in turn. */
public class RateLimitFilter extends OncePerRequestFilter {
  private final NamedLimiter[] limiters;

  public RateLimitFilter(RateLimiters limiters) {
    this.limiters = limiters.all().toArray(new NamedLimiter[0]);
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String path = request.getRequestURI().substring(request.getContextPath().length());
    for (NamedLimiter l : limiters) {
      if (l.matches(path) && !ServletLimiting.admit(l, request, response, l.cost())) return;
    }
    chain.doFilter(request, response);
  }
}
