package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Many threads on many stores admit exactly the limit, sync and async calls mixed. */
class ConcurrencyTest {
  private static final int THREADS = 64;
  private static final int STORES = 4;
  private static final int CALLS_PER_THREAD = 40;
  private static final long LIMIT = 1000;

  @Test
  void sixtyFourThreadsOnFourRedisStoresAdmitExactlyTheLimit() throws Exception {
    String url = TestRedis.fresh("clock=manual");
    List<Store> stores = new ArrayList<>();
    List<RateLimiter> limiters = new ArrayList<>();
    for (int i = 0; i < STORES; i++) {
      Store store = Store.open(url);
      stores.add(store);
      limiters.add(store.limiter(Map.of("algorithm", "sliding_log", "limit", LIMIT + "/h")));
    }
    try {
      assertEquals(LIMIT, admitted(limiters));
    } finally {
      for (RateLimiter l : limiters) l.close();
      for (Store s : stores) s.close();
    }
  }

  @Test
  void sixtyFourThreadsOnOneMemoryStoreAdmitExactlyTheLimit() throws Exception {
    try (Store store = Store.open("memory://?clock=manual");
        RateLimiter limiter = store.limiter(Map.of("algorithm", "gcra", "limit", LIMIT + "/h"))) {
      assertEquals(LIMIT, admitted(List.of(limiter, limiter, limiter, limiter)));
    }
  }

  // THREADS threads, each on limiters[thread % size], half of their calls async.
  private static long admitted(List<RateLimiter> limiters) throws Exception {
    AtomicLong admitted = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      RateLimiter limiter = limiters.get(t % limiters.size());
      Thread thread =
          new Thread(
              () -> {
                try {
                  start.await();
                  List<CompletableFuture<Decision>> pending = new ArrayList<>();
                  for (int i = 0; i < CALLS_PER_THREAD; i++) {
                    if (i % 2 == 0) {
                      if (limiter.tryAcquire("shared", 1).allowed()) admitted.incrementAndGet();
                    } else {
                      pending.add(limiter.tryAcquireAsync("shared", 1));
                    }
                  }
                  for (CompletableFuture<Decision> f : pending) {
                    if (f.join().allowed()) admitted.incrementAndGet();
                  }
                } catch (Throwable e) {
                  synchronized (failures) {
                    failures.add(e);
                  }
                }
              });
      thread.start();
      threads.add(thread);
    }
    start.countDown();
    for (Thread thread : threads) thread.join();
    assertEquals(List.of(), failures);
    return admitted.get();
  }
}
