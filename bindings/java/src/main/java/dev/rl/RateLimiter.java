package dev.rl;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One policy (algorithm, limits, name) over a {@link Store}; make it with {@link Store#limiter}.
 * Thread-safe. Keys are UTF-8 strings or raw bytes (1 to 512 bytes; byte[] for every call but acquire and
 * acquireBatch). Bad values (an empty key, a
 * cost below 1, a negative timeout) are {@link RateLimitException} {@link Status#INVALID_ARG};
 * null arguments are NullPointerException. Async methods return a future that completes on rl's
 * thread (use the *Async stages of CompletableFuture for slow work) and fails with
 * RateLimitException; they throw only NullPointerException.
 */
public final class RateLimiter implements AutoCloseable {
  /** One request of a batch. */
  public record Request(String key, long cost) {
    public Request {
      Objects.requireNonNull(key, "key");
    }
  }

  // rl clamps a wait beyond 2^52 us to it; anything longer is "forever".
  private static final long MAX_WAIT_US = 1L << 52;

  private final Store store;
  private final NativeHandle handle;
  private final String name;

  RateLimiter(Store store, long pointer) {
    this.store = store;
    this.handle = new NativeHandle(this, pointer, Native::limiterFree, "limiter");
    this.name = Native.limiterName(pointer);
  }

  /** The store it decides on. */
  public Store store() {
    return store;
  }

  /** Its name setting ("default" when not set). */
  public String name() {
    return name;
  }

  /** Decides a request of {@code cost} units and records it when admitted. */
  public Decision tryAcquire(String key, long cost) {
    return call(Native.OP_ACQUIRE, bytes(key), cost, 0);
  }

  public Decision tryAcquire(byte[] key, long cost) {
    return call(Native.OP_ACQUIRE, checked(key), cost, 0);
  }

  public Decision tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /** Decides without recording anything (cost 0: the key's state). */
  public Decision peek(String key, long cost) {
    return call(Native.OP_PEEK, bytes(key), cost, 0);
  }

  public Decision peek(byte[] key, long cost) {
    return call(Native.OP_PEEK, checked(key), cost, 0);
  }

  /** Gives {@code cost} units back to the key; returns its state afterwards. */
  public Decision refund(String key, long cost) {
    return call(Native.OP_REFUND, bytes(key), cost, 0);
  }

  public Decision refund(byte[] key, long cost) {
    return call(Native.OP_REFUND, checked(key), cost, 0);
  }

  /** Forgets the key: it is back to full capacity. */
  public void reset(String key) {
    call(Native.OP_RESET, bytes(key), 0, 0);
  }

  public void reset(byte[] key) {
    call(Native.OP_RESET, checked(key), 0, 0);
  }

  /**
   * Acquires, and while denied waits the retryAfter it was told and tries again, until admitted or
   * until waiting would pass {@code timeout} (then the last denial is returned at once). Blocks this
   * thread; a manual-clock store never waits.
   */
  public Decision acquire(String key, long cost, Duration timeout) {
    return call(Native.OP_ACQUIRE_WAIT, bytes(key), cost, waitUs(timeout));
  }

  /** Acquires each request on its own, in order, in one round trip per store node. */
  public List<Decision> acquireBatch(List<Request> requests) {
    Batch batch = new Batch(requests);
    long limiter = handle.acquire();
    try {
      return decisions(Native.batch(limiter, batch.keys, batch.costs, 0));
    } finally {
      handle.release();
    }
  }

  public CompletableFuture<Decision> tryAcquireAsync(String key, long cost) {
    return callAsync(Native.OP_ACQUIRE, bytes(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> tryAcquireAsync(byte[] key, long cost) {
    return callAsync(Native.OP_ACQUIRE, checked(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> peekAsync(String key, long cost) {
    return callAsync(Native.OP_PEEK, bytes(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> peekAsync(byte[] key, long cost) {
    return callAsync(Native.OP_PEEK, checked(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> refundAsync(String key, long cost) {
    return callAsync(Native.OP_REFUND, bytes(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> refundAsync(byte[] key, long cost) {
    return callAsync(Native.OP_REFUND, checked(key), cost, 0).thenApply(Decision::of);
  }

  public CompletableFuture<Void> resetAsync(byte[] key) {
    return callAsync(Native.OP_RESET, checked(key), 0, 0).thenApply(d -> null);
  }

  public CompletableFuture<Void> resetAsync(String key) {
    return callAsync(Native.OP_RESET, bytes(key), 0, 0).thenApply(d -> null);
  }

  /** {@link #acquire} without blocking anyone: the wait is a timer on rl's thread. */
  public CompletableFuture<Decision> acquireAsync(String key, long cost, Duration timeout) {
    long waitUs;
    try {
      waitUs = waitUs(timeout);
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    return callAsync(Native.OP_ACQUIRE_WAIT, bytes(key), cost, waitUs).thenApply(Decision::of);
  }

  public CompletableFuture<List<Decision>> acquireBatchAsync(List<Request> requests) {
    Batch batch = new Batch(requests);
    CompletableFuture<long[]> raw = new CompletableFuture<>();
    try {
      long limiter = handle.acquire();
      try {
        Native.batchAsync(limiter, batch.keys, batch.costs, 0, raw);
      } finally {
        handle.release();
      }
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    return raw.thenApply(RateLimiter::decisions);
  }

  /** Frees the limiter; calls in flight still complete. Idempotent. */
  @Override
  public void close() {
    handle.free();
  }

  private Decision call(int op, byte[] key, long cost, long waitUs) {
    long limiter = handle.acquire();
    try {
      return Decision.of(Native.call(limiter, op, key, cost, 0, waitUs));
    } finally {
      handle.release();
    }
  }

  private CompletableFuture<long[]> callAsync(int op, byte[] key, long cost, long waitUs) {
    CompletableFuture<long[]> raw = new CompletableFuture<>();
    try {
      long limiter = handle.acquire();
      try {
        Native.callAsync(limiter, op, key, cost, 0, waitUs, raw);
      } finally {
        handle.release();
      }
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    return raw;
  }

  private static List<Decision> decisions(long[] fields) {
    int count = fields.length / Native.DECISION_FIELDS;
    List<Decision> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) out.add(Decision.of(fields, i));
    return List.copyOf(out);
  }

  private static byte[] bytes(String key) {
    return Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] checked(byte[] key) {
    return Objects.requireNonNull(key, "key");
  }

  private static long waitUs(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new RateLimitException(Status.INVALID_ARG, "timeout: " + timeout + " is negative");
    }
    if (timeout.getSeconds() >= MAX_WAIT_US / 1_000_000) return MAX_WAIT_US;
    return timeout.getSeconds() * 1_000_000 + timeout.getNano() / 1_000;
  }

  /** A batch's keys and costs as the native layer takes them. */
  private static final class Batch {
    final byte[][] keys;
    final long[] costs;

    Batch(List<Request> requests) {
      Objects.requireNonNull(requests, "requests");
      keys = new byte[requests.size()][];
      costs = new long[requests.size()];
      for (int i = 0; i < keys.length; i++) {
        Request request = Objects.requireNonNull(requests.get(i), "requests[" + i + "]");
        keys[i] = bytes(request.key());
        costs[i] = request.cost();
      }
    }
  }
}
