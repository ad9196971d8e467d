package dev.rl;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * What a store has done since it opened (rl_store_get_stats). The round-trip quantiles are the
 * store's latency to Redis (none for memory://), each within 12.5%.
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
    Duration max) {
  static StoreStats of(long[] v) {
    return new StoreStats(
        (int) v[0], v[1], v[2], v[3], v[4], v[5], us(v[6]), us(v[7]), us(v[8]), us(v[9]));
  }

  private static Duration us(long micros) {
    return Duration.of(micros, ChronoUnit.MICROS);
  }
}
