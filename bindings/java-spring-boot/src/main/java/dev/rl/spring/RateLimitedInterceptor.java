package dev.rl.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/** Limits handler methods annotated {@link RateLimited} (or of an annotated controller). */
public class RateLimitedInterceptor implements HandlerInterceptor {
  private final RateLimiters limiters;

  public RateLimitedInterceptor(RateLimiters limiters) {
    this.limiters = limiters;
  }

  @Override
  public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
      throws Exception {
    if (!(handler instanceof HandlerMethod method)) return true;
    RateLimited limit =
        AnnotatedElementUtils.findMergedAnnotation(method.getMethod(), RateLimited.class);
    if (limit == null) {
      limit = AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), RateLimited.class);
    }
    if (limit == null) return true;
    NamedLimiter l = limiters.get(limit.value());
    return ServletLimiting.admit(l, request, response, limit.cost() > 0 ? limit.cost() : l.cost());
  }
}
