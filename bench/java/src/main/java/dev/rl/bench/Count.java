package dev.rl.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;

/**
 * bench/java/count's JVM: THREADS threads each make CALLS blocking decisions on 1,000 distinct
 * keys through one contender (rl-sliding_log, rl-gcra, lettuce), once to warm up and once to be
 * counted. It prints "ready", waits for a line on stdin (the counter attaches meanwhile), runs the
 * counted round, prints "done" with the heap bytes the calling threads allocated per decision,
 * and waits for another line (the counter detaches) before its threads exit. Counts, not times:
 * they hold on a loaded machine.
 *
 * <pre>
 *   java -cp ... dev.rl.bench.Count REDIS_URL KIND THREADS CALLS
 * </pre>
 */
public final class Count {
  private static final int KEYS = 1000;
  // Far above the load: every call is admitted and does the full work.
  private static final long LIMIT = 10_000_000L;

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: Count REDIS_URL rl-sliding_log|rl-gcra|lettuce THREADS CALLS");
      System.exit(2);
    }
    String url = args[0];
    int threads = Integer.parseInt(args[2]);
    int calls = Integer.parseInt(args[3]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    try (Contender contender = contender(url, args[1])) {
      round(contender, threads, calls, null).await();
      System.out.println("ready");
      System.out.flush();
      in.readLine();
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch finished = round(contender, threads, calls, release);
      finished.await();
      System.out.flush();
      in.readLine();
      release.countDown();
    }
  }

  private static Contender contender(String url, String kind) {
    return switch (kind) {
      case "rl-sliding_log" -> new RlContender(url, "sliding_log", LIMIT + "/1000ms");
      case "rl-gcra" -> new RlContender(url, "gcra", LIMIT + "/1s");
      case "lettuce" -> new LettuceSlidingLog(url, 1000, LIMIT);
      default -> throw new IllegalArgumentException("unknown contender " + kind);
    };
  }

  /**
   * Starts the round's threads; the latch it returns opens once they all decided. The counted
   * round ({@code release} not null) prints "done" first, and its threads stay alive until {@code
   * release} opens, so that the counter still sees them when it reads its per-process counts.
   */
  private static CountDownLatch round(
      Contender contender, int threads, int calls, CountDownLatch release) {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    String[] keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) keys[i] = "k" + i;
    long[] allocated = new long[threads];
    CountDownLatch decided = new CountDownLatch(threads);
    CountDownLatch finished = new CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread worker =
          new Thread(
              () -> {
                long before = mx.getCurrentThreadAllocatedBytes();
                int next = id * (KEYS / threads);
                try {
                  for (int i = 0; i < calls; i++) {
                    if (!contender.decide(keys[next])) throw new IllegalStateException("denied");
                    next = next + 1 == KEYS ? 0 : next + 1;
                  }
                } catch (Exception e) {
                  e.printStackTrace();
                  System.exit(1);
                }
                allocated[id] = mx.getCurrentThreadAllocatedBytes() - before;
                decided.countDown();
                if (release == null) return;
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "count-" + t);
      worker.setDaemon(true);
      worker.start();
    }
    new Thread(
            () -> {
              try {
                decided.await();
              } catch (InterruptedException e) {
                return;
              }
              if (release == null) {
                finished.countDown();
                return;
              }
              long total = 0;
              for (long a : allocated) total += a;
              long decisions = (long) threads * calls;
              System.out.printf(
                  "done %s: %d decisions, %.1f heap bytes allocated per decision by the callers%n",
                  contender.name(), decisions, (double) total / decisions);
              finished.countDown();
            })
        .start();
    return finished;
  }
}
