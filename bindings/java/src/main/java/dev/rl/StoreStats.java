package dev.rl;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * What a store has done since it opened (rl_store_get_stats). The round-trip quantiles are the
 * store's latency to Redis (none for memory://), each within 12.5%. {@code leases} sums the leases
 * of every limiter of the store ({@code lease=auto}).
 */
public record StoreStats(
    int breakerState,
    long breakerOpened,
    long allowed,
    long denied,
    long failures,
    long roundTrips,
    Duration p50,
    Duration p95,
    Duration p99,
    Duration max,
    Leases leases) {
  /**
   * What the leases of a store's limiters did (docs/algorithms.md, "Leases"): slices the store
   * granted, the units in them, the units left in slices when their lease ended, of those the units
   * handed back to the store, and the calls decided from a slice with no store call (counted in
   * {@code allowed} too).
   */
  public record Leases(
      long taken, long unitsLeased, long unitsUnused, long unitsReturned, long decisions) {}

  static StoreStats of(long[] v) {
    return new StoreStats(
        (int) v[0],
        v[1],
        v[2],
        v[3],
        v[4],
        v[5],
        us(v[6]),
        us(v[7]),
        us(v[8]),
        us(v[9]),
        new Leases(v[10], v[11], v[12], v[13], v[14]));
  }

  private static Duration us(long micros) {
    return Duration.of(micros, ChronoUnit.MICROS);
  }
}
