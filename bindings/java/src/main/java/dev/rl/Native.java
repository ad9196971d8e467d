package dev.rl;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The native layer (native/rl_jni.c): rl.h as static methods over raw handles. Decisions travel as
 * long[], {@link #DECISION_FIELDS} per decision. Failures throw {@link RateLimitException}. Loaded
 * by {@link NativeLoader}, never through LD_LIBRARY_PATH.
 */
final class Native {
  static final int DECISION_FIELDS = 8;
  static final int OP_ACQUIRE = 0;
  static final int OP_PEEK = 1;
  static final int OP_REFUND = 2;
  static final int OP_RESET = 3;
  static final int OP_ACQUIRE_WAIT = 4;

  static {
    NativeLoader.load();
  }

  /** Completions run so far, in the whole JVM (tests count them: exactly one per call). */
  static final AtomicLong COMPLETIONS = new AtomicLong();

  private Native() {}

  static native String statusName(int status);

  /** rl_status_is_outage: the failures on_failure and the breaker act on. */
  static native boolean statusIsOutage(int status);

  /** rl_status_description: one line saying what the status means; null past the last. */
  static native String statusDescription(int status);

  static native String sourceName(int source);

  /** RL_MAX_WAIT_US: the longest wait librl keeps (2^52 us); a longer one is this one. */
  static native long maxWaitUs();

  static native String version();

  static native long storeOpen(String url);

  static native void storeClose(long store);

  static native void storeFree(long store);

  /** rl_store_display_url: the URL with every credential replaced by ***. */
  static native String storeDisplayUrl(long store);

  /** rl_store_clock_set when set, else rl_store_clock_advance. */
  static native void clockMove(long store, boolean set, long us);

  /** The order of {@link StoreStats#of}. */
  static native long[] storeStats(long store);

  static native String storeMetrics(long store);

  static native long limiterNew(long store, String[] settings);

  static native void limiterFree(long limiter);

  static native String limiterName(long limiter);

  /** rl_limiter_limits: limit, window_us, burst for each limit, in order. */
  static native long[] limiterLimits(long limiter);

  static native String headerName(int header);

  /**
   * rl_headers_render. limits: limit, window_us, burst for each (as {@link #limiterLimits} gives
   * them); then the decision: allowed, remaining, retry_after_us (-1: never), reset_after_us,
   * limit_index, source (arguments: no array per request). The value of each field by rl_header,
   * null where not sent; without withPolicy, RateLimit-Policy is "" where sent (its value depends on
   * the limiter alone).
   */
  static native String[] headersRender(
      String name,
      long[] limits,
      boolean allowed,
      long remaining,
      long retryAfterUs,
      long resetAfterUs,
      long limitIndex,
      long source,
      boolean withPolicy);

  /**
   * One blocking call; its decision's {@link #DECISION_FIELDS} fields go into {@code out}, which
   * the caller allocates (cheaper in Java than a new array made by the native layer).
   */
  static native void call(
      long limiter, int op, byte[] key, long cost, long timeoutUs, long waitUs, long[] out);

  /** One rl_op (not a wait), completing future on rl's thread. */
  static native void callAsync(
      long limiter, int op, byte[] key, long cost, long timeoutUs, CompletableFuture<long[]> future);

  /**
   * rl_limiter_acquire_wait_start, completing future on rl's thread: returns the wait, for {@link
   * #waitCancel}; free it once with {@link #waitFree}.
   */
  static native long acquireWaitAsync(
      long limiter,
      byte[] key,
      long cost,
      long timeoutUs,
      long waitUs,
      CompletableFuture<long[]> future);

  /** rl_wait_cancel: librl ends the wait and refunds an admission nobody took, once. */
  static native void waitCancel(long wait);

  /** rl_wait_free. */
  static native void waitFree(long wait);

  static native long[] batch(long limiter, byte[][] keys, long[] costs, long timeoutUs);

  static native void batchAsync(
      long limiter, byte[][] keys, long[] costs, long timeoutUs, CompletableFuture<long[]> future);

  /**
   * A batch's results, one per request (rl_limiter_acquire_batch_each): DECISION_FIELDS decision
   * fields each (zero for a failed request), its rl_status, and its message (null when it did not
   * fail).
   */
  record Each(long[] decisions, int[] statuses, String[] messages) {}

  static native Each batchEach(long limiter, byte[][] keys, long[] costs, long timeoutUs);

  static native void batchEachAsync(
      long limiter, byte[][] keys, long[] costs, long timeoutUs, CompletableFuture<Each> future);

  /**
   * Called by rl_jni.c on rl's thread, exactly once per batchEachAsync; each is null when it could
   * not be built (out of memory). Never throws.
   */
  @SuppressWarnings("unused")
  private static void completeEach(CompletableFuture<Each> future, Each each) {
    COMPLETIONS.incrementAndGet();
    try {
      if (each != null) {
        future.complete(each);
      } else {
        future.completeExceptionally(
            new RateLimitException(Status.NO_MEMORY, "out of memory for a batch's results"));
      }
    } catch (Throwable ignored) {
      // A dependent stage's own failure is that stage's, not rl's.
    }
  }

  /**
   * Called by rl_jni.c on rl's thread, exactly once per asynchronous call. Never throws: nothing may
   * be left pending across rl's callback.
   */
  @SuppressWarnings("unused")
  private static void complete(
      CompletableFuture<long[]> future, int status, long[] decisions, String message) {
    COMPLETIONS.incrementAndGet();
    try {
      if (status == 0) {
        future.complete(decisions);
      } else {
        future.completeExceptionally(new RateLimitException(status, message));
      }
    } catch (Throwable ignored) {
      // A dependent stage's own failure is that stage's, not rl's.
    }
  }
}
