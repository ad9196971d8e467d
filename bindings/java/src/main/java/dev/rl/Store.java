package dev.rl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where limiter state lives: {@code memory://} or {@code redis://[user:pass@]host:port[/db]}, with
 * store settings as query parameters ({@code ?timeout_ms=50&prefix=app}). Thread-safe. Close it
 * when done (try-with-resources): calls in flight then complete with {@link Status#SHUTDOWN}, as
 * does every later call on its limiters. A store never closed is freed by a Cleaner.
 */
public final class Store implements AutoCloseable {
  private final NativeHandle handle;
  private final String url;

  private Store(long pointer) {
    this.handle = new NativeHandle(this, pointer, Native::storeFree, "store");
    this.url = Native.storeDisplayUrl(pointer);
  }

  /** Opens a store; a bad URL or setting is RateLimitException INVALID_ARG naming it. */
  public static Store open(String url) {
    Objects.requireNonNull(url, "url");
    return new Store(Native.storeOpen(url));
  }

  /**
   * The URL the store was opened with in librl's display form ({@code rl_store_display_url}): the
   * password and every secret setting ({@code sentinel_password}) replaced by {@code ***}, e.g.
   * {@code redis://app:***@host:6379/0}. Still true after {@link #close()}.
   */
  public String url() {
    return url;
  }

  /** {@code Store(} the URL in its display form {@code )}: never a credential. */
  @Override
  public String toString() {
    return "Store(" + url + ")";
  }

  /**
   * A limiter over this store, from limiter settings applied in the map's iteration order
   * (algorithm, limit, burst, name, on_failure, ...; e.g. {@code Map.of("limit", "100/1m")}).
   */
  public RateLimiter limiter(Map<String, String> settings) {
    Objects.requireNonNull(settings, "settings");
    List<String> flat = new ArrayList<>();
    settings.forEach(
        (name, value) -> {
          flat.add(Objects.requireNonNull(name, "settings: a name"));
          flat.add(Objects.requireNonNull(value, "settings: the value of " + name));
        });
    String[] pairs = flat.toArray(new String[0]);
    return handle.with(store -> new RateLimiter(this, Native.limiterNew(store, pairs)));
  }

  /** Manual clock (stores opened with clock=manual): sets the time to {@code us} microseconds. */
  public void clockSet(long us) {
    handle.run(store -> Native.clockMove(store, true, us));
  }

  /** Manual clock: moves the time forward by {@code us} microseconds (never backwards). */
  public void clockAdvance(long us) {
    handle.run(store -> Native.clockMove(store, false, us));
  }

  /** What the store has done, with its round-trip latency p50/p95/p99/max. */
  public StoreStats stats() {
    return handle.with(store -> StoreStats.of(Native.storeStats(store)));
  }

  /** The same statistics in the Prometheus text format. */
  public String metrics() {
    return handle.with(Native::storeMetrics);
  }

  /**
   * Closes the store and frees it: every call in flight completes (its future exactly once) with
   * SHUTDOWN before this returns. Idempotent. Must not be called from a completion (a future's
   * dependent stage running on rl's thread).
   */
  @Override
  public void close() {
    handle.close(Native::storeClose); // ends calls in flight, so the free does not wait for them
  }
}
