package dev.rl;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The HTTP header fields of one limiter's decisions, as rl's Node and Go middleware write them: the
 * IETF draft "RateLimit header fields for HTTP"
 *
 * <pre>
 *   RateLimit-Policy: "api";q=100;w=60      one item per limit
 *   RateLimit: "api";r=42;t=18              the limit that decided
 * </pre>
 *
 * and {@code Retry-After} (seconds, RFC 9110) on a denial that can be retried. Seconds are rounded
 * up, so a client that waits as told is never early. Items are named after the limiter ({@code
 * name-i} when it has several limits). Framework-free: any server sets the map it returns.
 */
public final class RateLimitHeaders {
  private final String policy;
  private final String[] itemNames;

  public RateLimitHeaders(RateLimiter limiter) {
    Objects.requireNonNull(limiter, "limiter");
    List<Limit> limits = limiter.limits();
    itemNames = new String[limits.size()];
    StringBuilder items = new StringBuilder();
    for (int i = 0; i < limits.size(); i++) {
      itemNames[i] = quoted(limits.size() == 1 ? limiter.name() : limiter.name() + "-" + i);
      if (i > 0) items.append(", ");
      Limit limit = limits.get(i);
      items.append(itemNames[i]).append(";q=").append(limit.limit());
      items.append(";w=").append(Math.max(1, seconds(limit.window())));
    }
    policy = items.toString();
  }

  /** The RateLimit-Policy value: every limit of the limiter. */
  public String policy() {
    return policy;
  }

  /**
   * The fields for one decision, in order: RateLimit-Policy, RateLimit, and Retry-After when it
   * was denied and can be retried. A fail-open decision counted nothing, so it gets none (an empty
   * map), as in the Node and Go middleware.
   */
  public Map<String, String> of(Decision decision) {
    Map<String, String> fields = new LinkedHashMap<>();
    if (decision.source() == Source.FAIL_OPEN) return fields;
    int index = Math.min(Math.max(decision.limitIndex(), 0), itemNames.length - 1);
    fields.put("RateLimit-Policy", policy);
    fields.put(
        "RateLimit",
        itemNames[index] + ";r=" + decision.remaining() + ";t=" + seconds(decision.resetAfter()));
    if (!decision.allowed() && !decision.retryAfter().equals(Decision.NEVER)) {
      fields.put("Retry-After", Long.toString(Math.max(1, seconds(decision.retryAfter()))));
    }
    return fields;
  }

  /** d in whole seconds, rounded up. */
  private static long seconds(Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  /** A structured-field string: in quotes, with backslash and quote escaped. */
  private static String quoted(String name) {
    return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
