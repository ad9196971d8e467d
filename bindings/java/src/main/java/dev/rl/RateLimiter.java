package dev.rl;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

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

  /**
   * One request's result in {@link #acquireBatchEach}: its decision, or the exception it failed
   * with (exactly one of the two is null).
   */
  public record BatchResult(Decision decision, RateLimitException error) {
    /** True when the request was decided (allowed or denied), false when it failed. */
    public boolean ok() {
      return error == null;
    }
  }

  // librl's longest wait (RL_MAX_WAIT_US, 2^52 us); anything longer is "forever".
  private static final long MAX_WAIT_US = Native.maxWaitUs();

  private final Store store;
  private final NativeHandle handle;
  private final String name;
  private final List<Limit> limits;
  /** This view's deadline per call, rl_request.timeout_us (0: the store's timeout_ms alone). */
  private final long timeoutUs;
  /** The limiter a view was made from (null for the limiter itself): it owns the handle. */
  private final RateLimiter owner;

  RateLimiter(Store store, long pointer) {
    this.store = store;
    this.handle = new NativeHandle(this, pointer, Native::limiterFree, "limiter");
    this.name = Native.limiterName(pointer);
    this.limits = Limit.of(Native.limiterLimits(pointer));
    this.timeoutUs = 0;
    this.owner = null;
  }

  private RateLimiter(RateLimiter owner, long timeoutUs) {
    this.store = owner.store;
    this.handle = owner.handle;
    this.name = owner.name;
    this.limits = owner.limits;
    this.timeoutUs = timeoutUs;
    this.owner = owner; // keeps the owner, and so its Cleaner, from running while the view is used
  }

  /**
   * This limiter with a deadline of its own on every call: each call made through the returned view
   * (sync or async, batches included) gives up {@code timeout} after it starts, failing with
   * {@link Status#TIMEOUT}, when that comes before the store's {@code timeout_ms} (a longer one
   * changes nothing). The deadline reaches rl's store (rl_request.timeout_us): a Redis call stops
   * waiting at it. {@link Duration#ZERO} is no deadline of its own. The view shares this limiter:
   * closing the view does nothing, closing this limiter closes both.
   *
   * @throws RateLimitException INVALID_ARG for a negative timeout
   */
  public RateLimiter withTimeout(Duration timeout) {
    return new RateLimiter(owner != null ? owner : this, timeoutUs(timeout));
  }

  /** The per-call deadline of this view ({@link Duration#ZERO}: the store's timeout_ms alone). */
  public Duration timeout() {
    return Duration.of(timeoutUs, ChronoUnit.MICROS);
  }

  /** The store it decides on. */
  public Store store() {
    return store;
  }

  /** Its name setting ("default" when not set). */
  public String name() {
    return name;
  }

  /** Its limits, as rl parsed the limit and burst settings, in their order (1 to 8). */
  public List<Limit> limits() {
    return limits;
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
    reset(bytes(key));
  }

  public void reset(byte[] key) {
    if (timeoutUs == 0) {
      call(Native.OP_RESET, checked(key), 0, 0);
      return;
    }
    // rl's blocking reset takes no rl_request, so no deadline: a view waits for the async form.
    try {
      resetAsync(key).join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RateLimitException failure) throw failure;
      throw e;
    }
  }

  /**
   * Acquires, and while denied waits the retryAfter it was told and tries again, until admitted or
   * until waiting would pass {@code timeout} (then the last denial is returned at once). Blocks this
   * thread; a manual-clock store never waits. {@code timeout} is also the deadline of each store call
   * in the wait (with the view's own, {@link #withTimeout}, when shorter): a store that does not
   * answer by then is {@link Status#TIMEOUT}. {@link Duration#ZERO} tries once, within the store's
   * timeout_ms.
   */
  public Decision acquire(String key, long cost, Duration timeout) {
    return call(Native.OP_ACQUIRE_WAIT, bytes(key), cost, waitUs(timeout));
  }

  /** Acquires each request on its own, in order, in one round trip per store node. */
  public List<Decision> acquireBatch(List<Request> requests) {
    Batch batch = new Batch(requests);
    return handle.with(
        limiter -> decisions(Native.batch(limiter, batch.keys, batch.costs, timeoutUs)));
  }

  /**
   * {@link #acquireBatch} with a result per request (rl_limiter_acquire_batch_each): results.get(i)
   * holds request i's decision, or the exception it failed with, so that one failed request does
   * not hide the others' decisions. On one Redis node an outage fails every request alike; with
   * Redis Cluster a batch is split by node, and one node can fail while the others answer. Throws
   * only for the call itself: a malformed batch (nothing decided; the message names the request's
   * index) or a closed store.
   */
  public List<BatchResult> acquireBatchEach(List<Request> requests) {
    Batch batch = new Batch(requests);
    return handle.with(
        limiter -> results(Native.batchEach(limiter, batch.keys, batch.costs, timeoutUs)));
  }

  public CompletableFuture<Decision> tryAcquireAsync(String key, long cost) {
    return callAsync(Native.OP_ACQUIRE, bytes(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> tryAcquireAsync(byte[] key, long cost) {
    return callAsync(Native.OP_ACQUIRE, checked(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> peekAsync(String key, long cost) {
    return callAsync(Native.OP_PEEK, bytes(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> peekAsync(byte[] key, long cost) {
    return callAsync(Native.OP_PEEK, checked(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> refundAsync(String key, long cost) {
    return callAsync(Native.OP_REFUND, bytes(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Decision> refundAsync(byte[] key, long cost) {
    return callAsync(Native.OP_REFUND, checked(key), cost).thenApply(Decision::of);
  }

  public CompletableFuture<Void> resetAsync(byte[] key) {
    return callAsync(Native.OP_RESET, checked(key), 0).thenApply(d -> null);
  }

  public CompletableFuture<Void> resetAsync(String key) {
    return callAsync(Native.OP_RESET, bytes(key), 0).thenApply(d -> null);
  }

  /**
   * {@link #acquire} without blocking anyone: the wait is a timer on rl's thread. Cancelling the
   * future ends the wait; should librl admit the request anyway, it refunds the units, once.
   */
  public CompletableFuture<Decision> acquireAsync(String key, long cost, Duration timeout) {
    long waitUs;
    try {
      waitUs = waitUs(timeout);
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    byte[] bytes = bytes(key);
    long requestUs = requestUs(Native.OP_ACQUIRE_WAIT, waitUs);
    CompletableFuture<long[]> raw = new CompletableFuture<>();
    long wait;
    try {
      wait =
          handle.with(
              limiter -> Native.acquireWaitAsync(limiter, bytes, cost, requestUs, waitUs, raw));
    } catch (RateLimitException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Decision> decided = raw.thenApply(Decision::of);
    // Completes exactly once: cancelled by its caller (then librl ends the wait and refunds an
    // admission nobody took, even one on its way into this future), or with librl's answer.
    decided.whenComplete(
        (d, e) -> {
          if (decided.isCancelled()) Native.waitCancel(wait);
          Native.waitFree(wait);
        });
    return decided;
  }

  public CompletableFuture<List<Decision>> acquireBatchAsync(List<Request> requests) {
    Batch batch = new Batch(requests);
    CompletableFuture<long[]> raw = new CompletableFuture<>();
    return handle
        .start(raw, limiter -> Native.batchAsync(limiter, batch.keys, batch.costs, timeoutUs, raw))
        .thenApply(RateLimiter::decisions);
  }

  /** {@link #acquireBatchEach} without blocking: the future fails only as that call throws. */
  public CompletableFuture<List<BatchResult>> acquireBatchEachAsync(List<Request> requests) {
    Batch batch = new Batch(requests);
    CompletableFuture<Native.Each> raw = new CompletableFuture<>();
    return handle
        .start(
            raw, limiter -> Native.batchEachAsync(limiter, batch.keys, batch.costs, timeoutUs, raw))
        .thenApply(RateLimiter::results);
  }

  /**
   * Frees the limiter; calls in flight still complete. Idempotent. On a view ({@link #withTimeout})
   * it does nothing: the limiter it came from owns the handle.
   */
  @Override
  public void close() {
    if (owner == null) handle.free();
  }

  /**
   * The hot path: acquire/release by hand, since {@link NativeHandle#with}'s lambda would capture
   * the arguments (an allocation per call).
   */
  private Decision call(int op, byte[] key, long cost, long waitUs) {
    long[] fields = new long[Native.DECISION_FIELDS];
    long limiter = handle.acquire();
    try {
      Native.call(limiter, op, key, cost, requestUs(op, waitUs), waitUs, fields);
    } finally {
      handle.release();
    }
    return Decision.of(fields);
  }

  private CompletableFuture<long[]> callAsync(int op, byte[] key, long cost) {
    CompletableFuture<long[]> raw = new CompletableFuture<>();
    return handle.start(raw, limiter -> Native.callAsync(limiter, op, key, cost, timeoutUs, raw));
  }

  /**
   * The store-call deadline of one call: the view's, and for a wait also the wait's timeout (the
   * caller's budget for the whole call), whichever is shorter; 0 when neither is set.
   */
  private long requestUs(int op, long waitUs) {
    if (op != Native.OP_ACQUIRE_WAIT || waitUs == 0) return timeoutUs;
    return timeoutUs == 0 ? waitUs : Math.min(timeoutUs, waitUs);
  }

  private static List<Decision> decisions(long[] fields) {
    int count = fields.length / Native.DECISION_FIELDS;
    List<Decision> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) out.add(Decision.of(fields, i));
    return List.copyOf(out);
  }

  private static List<BatchResult> results(Native.Each each) {
    List<BatchResult> out = new ArrayList<>(each.statuses().length);
    for (int i = 0; i < each.statuses().length; i++) {
      int status = each.statuses()[i];
      out.add(
          status == 0
              ? new BatchResult(Decision.of(each.decisions(), i), null)
              : new BatchResult(null, new RateLimitException(status, each.messages()[i])));
    }
    return List.copyOf(out);
  }

  private static byte[] bytes(String key) {
    return Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] checked(byte[] key) {
    return Objects.requireNonNull(key, "key");
  }

  private static long waitUs(Duration timeout) {
    return Math.min(timeoutUs(timeout), MAX_WAIT_US);
  }

  /** timeout in whole microseconds, rounded up (a deadline is never earlier than asked). */
  private static long timeoutUs(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new RateLimitException(Status.INVALID_ARG, "timeout: " + timeout + " is negative");
    }
    if (timeout.getSeconds() >= MAX_WAIT_US / 1_000_000) return MAX_WAIT_US;
    return timeout.getSeconds() * 1_000_000 + (timeout.getNano() + 999) / 1_000;
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
