package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A store's statistics count the leases of every limiter of the store. */
class StoreStatsTest {
  private static final Map<String, String> LEASING =
      Map.of(
          "algorithm", "fixed_window",
          "limit", "10/s",
          "lease", "auto",
          "lease_threshold", "20",
          "lease_share", "1/2");

  @Test
  void leasesOfEveryLimiterAreCounted() {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter one = store.limiter(LEASING);
        RateLimiter two = store.limiter(LEASING)) {
      long allowed = 0;
      for (int i = 0; i < 12; i++) allowed += one.tryAcquire("k").allowed() ? 1 : 0;
      for (int i = 0; i < 3; i++) allowed += two.tryAcquire("k").allowed() ? 1 : 0;
      assertTrue(allowed <= 10, allowed + " allowed");
      StoreStats stats = store.stats();
      StoreStats.Leases leases = stats.leases();
      assertTrue(leases.taken() >= 1 && leases.unitsLeased() >= leases.taken(), leases.toString());
      assertTrue(
          leases.decisions() >= 1 && leases.decisions() <= leases.unitsLeased(), leases.toString());
      assertTrue(leases.unitsReturned() <= leases.unitsUnused(), leases.toString());
      assertEquals(allowed, stats.allowed(), "a decision from a slice counts as the store's");
      assertTrue(
          store.metrics().contains("\nrl_lease_taken_total " + leases.taken() + "\n"),
          store.metrics());
    }
  }

  @Test
  void noLeasesWithoutLeaseAuto() {
    try (Store store = Store.open("memory://");
        RateLimiter limiter = store.limiter(Map.of("limit", "5/s"))) {
      limiter.tryAcquire("k");
      assertEquals(new StoreStats.Leases(0, 0, 0, 0, 0), store.stats().leases());
    }
  }
}
