package dev.rl.spring;

import dev.rl.Decision;
import dev.rl.RateLimitException;
import dev.rl.RateLimitHeaders;
import dev.rl.RateLimiter;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.springframework.util.AntPathMatcher;

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
  /** Per path: it has no wildcard, so matching it is equality (AntPathMatcher's answer). */
  private final boolean[] literal;

  NamedLimiter(String name, RateLimiter limiter, KeySource key, long cost, List<String> paths) {
    this.name = name;
    this.limiter = limiter;
    this.headers = new RateLimitHeaders(limiter);
    this.key = key;
    this.cost = cost;
    this.paths = List.copyOf(paths);
    this.literal = new boolean[this.paths.size()];
    for (int i = 0; i < literal.length; i++) literal[i] = !MATCHER.isPattern(this.paths.get(i));
  }

  private static final AntPathMatcher MATCHER = new AntPathMatcher();

  /** Whether the filters limit path: it matches one of paths (Ant patterns). */
  boolean matches(String path) {
    for (int i = 0; i < literal.length; i++) {
      String p = paths.get(i);
      if (literal[i] && p.equals(path) || MATCHER.match(p, path)) return true;
    }
    return false;
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

  long cost() {
    return cost;
  }

  /** The request attribute holding the decision a request got (a {@link Decision}). */
  public static final String DECISION_ATTRIBUTE = "dev.rl.spring.decision";

  /**
   * What a request gets: status 0 to go on (with the decision), 429 or 503 with the body to send;
   * its RateLimit header fields are set either way (none for fail_open and outages).
   */
  record Answer(int status, Decision decision, RateLimitHeaders headers) {
    boolean proceeds() {
      return status == 0;
    }

    /** Gives each RateLimit field to {@code field} (rendered now: no map per request). */
    void fields(BiConsumer<String, String> field) {
      if (decision != null) headers.forEach(decision, field); // none for fail_open
    }

    String body() {
      return status == 429
          ? "Too Many Requests\n"
          : "Service Unavailable: rate limiter store unreachable\n";
    }
  }

  private static final Answer OUTAGE = new Answer(503, null, null);

  private Answer answer(Decision decision) {
    return new Answer(decision.allowed() ? 0 : 429, decision, headers);
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
   * Decides without blocking: the answer is made and the future completed on {@code then} (never
   * on rl's I/O thread, which must stay free for other calls' replies); failures other than a store
   * outage complete it exceptionally.
   */
  CompletableFuture<Answer> decideAsync(String key, long units, Executor then) {
    return limiter.tryAcquireAsync(key, units).handleAsync(this::answerOrOutage, then);
  }

  private Answer answerOrOutage(Decision decision, Throwable err) {
    if (err == null) return answer(decision);
    Throwable cause = err instanceof CompletionException ? err.getCause() : err;
    if (cause instanceof RateLimitException e && e.status().isOutage()) return OUTAGE;
    throw err instanceof CompletionException c ? c : new CompletionException(cause);
  }
}
