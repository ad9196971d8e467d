package dev.rl.spring;

import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One configured limiter: the rl limiter, where its key comes from, its cost, the paths the
 * filters limit, and the one answer every entry point (servlet filter, WebFlux filter,
 * {@link RateLimited}) gives: go on, 429 with the RateLimit fields, or 503 for a store outage
 * under on_failure=closed.
 */
public final class NamedLimiter {
  private final String name;
  private final RateLimiter limiter;
  private final RateLimitHeaders headers;
  private final KeySource key;
  private final long cost;
  private final List<String> paths;

  NamedLimiter(String name, RateLimiter limiter, KeySource key, long cost, List<String> paths) {
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

  KeySource key() {
    return key;
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
   * What a request gets: status 0 to go on (with the decision), 429 or 503 with the body to send;
   * fields are the RateLimit header fields to set either way (none for fail_open and outages).
   */
  record Answer(int status, Decision decision, Map<String, String> fields) {
    boolean proceeds() {
      return status == 0;
    }

    String body() {
      return status == 429
          ? "Too Many Requests\n"
          : "Service Unavailable: rate limiter store unreachable\n";
    }
  }

  private static final Answer OUTAGE = new Answer(503, null, Map.of());

  private Answer answer(Decision decision) {
    Map<String, String> fields = headers.of(decision); // none for fail_open: nothing was counted
    return new Answer(decision.allowed() ? 0 : 429, decision, fields);
  }

  /** Decides on the caller's thread; failures other than a store outage are thrown. */
  Answer decide(String key, long units) {
    try {
      return answer(limiter.tryAcquire(key, units));
    } catch (RateLimitException e) {
      if (!e.status().isOutage()) throw e;
      return OUTAGE;
    }
  }

  /**
   * Decides without blocking: completes on rl's I/O thread (callers move off it); failures other
   * than a store outage complete it exceptionally.
   */
  CompletableFuture<Answer> decideAsync(String key, long units) {
    return limiter
        .tryAcquireAsync(key, units)
        .thenApply(this::answer)
        .exceptionally(
            err -> {
              Throwable cause = err instanceof CompletionException ? err.getCause() : err;
              if (cause instanceof RateLimitException e && e.status().isOutage()) return OUTAGE;
              throw err instanceof CompletionException c ? c : new CompletionException(cause);
            });
  }
}
