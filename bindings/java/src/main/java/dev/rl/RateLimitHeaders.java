package dev.rl;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * The HTTP header fields of one limiter's decisions: the IETF draft "RateLimit header fields for
 * HTTP"
 *
 * <pre>
 *   RateLimit-Policy: "api";q=100;w=60      one item per limit
 *   RateLimit: "api";r=42;t=18              the limit that decided
 * </pre>
 *
 * and {@code Retry-After} (seconds, RFC 9110) on a denial that can be retried. librl renders them
 * (rl_headers_render; docs/http-headers.md states the rule), so the Node and Go middleware send
 * the same bytes for the same decision. Framework-free: any server sets the map it returns.
 */
public final class RateLimitHeaders {
  private final String name;
  private final long[] limits; // limit, window_us, burst for each, as Native.limiterLimits has them
  private final String policy;

  public RateLimitHeaders(RateLimiter limiter) {
    this(Objects.requireNonNull(limiter, "limiter").name(), limiter.limits());
  }

  /**
   * The fields of a limiter named {@code name} with {@code limits} (as {@link RateLimiter#name}
   * and {@link RateLimiter#limits} give them).
   *
   * @throws RateLimitException (INVALID_ARG) for a name that cannot be quoted or no limits
   */
  public RateLimitHeaders(String name, List<Limit> limits) {
    this.name = Objects.requireNonNull(name, "name");
    this.limits = new long[3 * limits.size()];
    for (int i = 0; i < limits.size(); i++) {
      Limit limit = limits.get(i);
      this.limits[3 * i] = limit.limit();
      this.limits[3 * i + 1] = micros(limit.window());
      this.limits[3 * i + 2] = limit.burst();
    }
    // The policy does not depend on the decision: any one of this limiter renders it.
    policy = render(true, 0, 0, 0, 0, Source.STORE, true)[0];
  }

  /** The RateLimit-Policy value: every limit of the limiter. */
  public String policy() {
    return policy;
  }

  /**
   * The fields for one decision, in order: RateLimit-Policy, RateLimit, and Retry-After when it
   * was denied and can be retried. A fail-open decision counted nothing, so it gets none (an empty
   * map).
   *
   * @throws RateLimitException (INVALID_ARG) for a decision no limiter of these limits could make
   *     (a limit index beyond them)
   */
  public Map<String, String> of(Decision decision) {
    Map<String, String> fields = new LinkedHashMap<>();
    forEach(decision, fields::put);
    return fields;
  }

  /**
   * {@link #of} without the map, for a server's hot path: gives each field's name and value to
   * {@code field}, in the same order.
   *
   * @throws RateLimitException (INVALID_ARG) as {@link #of}
   */
  public void forEach(Decision decision, BiConsumer<String, String> field) {
    String[] values =
        render(
            decision.allowed(),
            decision.remaining(),
            decision.retryAfter().equals(Decision.NEVER) ? -1 : micros(decision.retryAfter()),
            micros(decision.resetAfter()),
            decision.limitIndex(),
            decision.source(),
            false);
    // The policy is this limiter's, rendered once: librl says whether it goes ("" where it does).
    if (values[RL_HEADER_RATELIMIT_POLICY] != null) values[RL_HEADER_RATELIMIT_POLICY] = policy;
    String[] names = names(values.length);
    for (int header = 0; header < values.length; header++) {
      if (values[header] != null) field.accept(names[header], values[header]);
    }
  }

  // rl_header_name by rl_header, fetched once: a JNI call and a new String per field and request
  // otherwise. A race fetches them twice, harmlessly.
  private static volatile String[] headerNames;

  private static String[] names(int count) {
    String[] names = headerNames;
    if (names == null || names.length != count) {
      names = new String[count];
      for (int header = 0; header < count; header++) names[header] = Native.headerName(header);
      headerNames = names;
    }
    return names;
  }

  // rl_header's RL_HEADER_RATELIMIT_POLICY.
  private static final int RL_HEADER_RATELIMIT_POLICY = 0;

  private String[] render(
      boolean allowed,
      long remaining,
      long retryAfterUs,
      long resetAfterUs,
      int limitIndex,
      Source source,
      boolean withPolicy) {
    return Native.headersRender(
        name,
        limits,
        allowed,
        remaining,
        retryAfterUs,
        resetAfterUs,
        limitIndex,
        source.ordinal(),
        withPolicy);
  }

  /** d in whole microseconds, rounded up (rl counts microseconds). */
  private static long micros(Duration d) {
    long us = Math.multiplyExact(d.getSeconds(), 1_000_000L);
    return d.getNano() % 1000 > 0 ? us + d.getNano() / 1000 + 1 : us + d.getNano() / 1000;
  }
}
