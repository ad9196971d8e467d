package dev.rl.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One measurement: {@code threads} threads calling a contender back to back for a duration, on
 * distinct keys (each call the next of {@code keys} keys) or on one hot key; every call is timed.
 */
record Phase(int threads, boolean hotKey, int keys, long durationMs) {
  /** What a phase measured. */
  record Result(
      String library, int threads, String keys, long decisions, long denied, double perSecond,
      double p50us, double p95us, double p99us, double redisUsPerDecision,
      double redisCommandUsPerDecision, double clientUsPerDecision) {
    String json() {
      return String.format(
          Locale.ROOT,
          "{\"bench\":\"java\",\"library\":\"%s\",\"threads\":%d,\"keys\":\"%s\",\"decisions\":%d,"
              + "\"denied\":%d,\"per_second\":%.0f,\"p50_us\":%.1f,\"p95_us\":%.1f,\"p99_us\":%.1f,"
              + "\"redis_us_per_decision\":%.1f,\"redis_command_us_per_decision\":%.2f,"
              + "\"client_us_per_decision\":%.1f}",
          library, threads, keys, decisions, denied, perSecond, p50us, p95us, p99us,
          redisUsPerDecision, redisCommandUsPerDecision, clientUsPerDecision);
    }

    /**
     * What a measurement counted: its decisions over its seconds, their latencies (ns, sorted), the
     * server's CPU and command time (us) and the client's CPU time (ns) meanwhile.
     */
    static Result of(
        String library, int threads, String keys, long decisions, long denied, double seconds,
        long[] sortedNs, long redisCpuUs, long redisCommandsUs, long clientNs) {
      double per = decisions == 0 ? Double.NaN : 1.0 / decisions;
      return new Result(
          library, threads, keys, decisions, denied, decisions / seconds,
          quantileUs(sortedNs, 0.50), quantileUs(sortedNs, 0.95), quantileUs(sortedNs, 0.99),
          redisCpuUs * per, redisCommandsUs * per, clientNs / 1000.0 * per);
    }

    private static double quantileUs(long[] sorted, double q) {
      if (sorted.length == 0) return Double.NaN;
      int index = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
      return sorted[Math.max(0, index)] / 1000.0;
    }
  }

  /** This JVM's CPU time: the client's side of every decision (threads, library, I/O). */
  static final com.sun.management.OperatingSystemMXBean PROCESS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  // Latency samples kept per thread; past this a thread keeps counting without recording.
  private static final int SAMPLES_PER_THREAD = 1 << 20;

  String keysName() {
    return hotKey ? "hot" : "distinct";
  }

  /** Runs the phase; redisCpu (may be null) gives the server's CPU per decision. */
  Result run(Contender contender, RedisCpu redisCpu) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch start = new CountDownLatch(1);
    long[][] samples = new long[threads][];
    int[] recorded = new int[threads];
    long[] calls = new long[threads];
    long[] denied = new long[threads];
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread worker =
          new Thread(
              () -> {
                long[] mine = new long[SAMPLES_PER_THREAD];
                samples[id] = mine;
                int n = 0;
                long count = 0;
                long no = 0;
                // Threads start at different keys so that distinct keys stay distinct.
                int next = id * (keys / Math.max(1, threads));
                ready.countDown();
                try {
                  start.await();
                  while (!stop.get()) {
                    String key = hotKey ? "hot" : "k" + next;
                    next = next + 1 == keys ? 0 : next + 1;
                    long began = System.nanoTime();
                    boolean allowed = contender.decide(key);
                    long took = System.nanoTime() - began;
                    if (n < mine.length) mine[n++] = took;
                    count++;
                    if (!allowed) no++;
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                  stop.set(true);
                }
                recorded[id] = n;
                calls[id] = count;
                denied[id] = no;
              },
              "bench-" + t);
      workers.add(worker);
      worker.start();
    }
    ready.await();
    long cpuBefore = redisCpu != null ? redisCpu.micros() : 0;
    long commandsBefore = redisCpu != null ? redisCpu.commandMicros() : 0;
    long clientBefore = PROCESS.getProcessCpuTime();
    long began = System.nanoTime();
    start.countDown();
    Thread.sleep(durationMs); // the measurement's length, not a wait for an event
    stop.set(true);
    for (Thread worker : workers) worker.join();
    double seconds = (System.nanoTime() - began) / 1e9;
    long clientNs = PROCESS.getProcessCpuTime() - clientBefore;
    long cpuUs = redisCpu != null ? redisCpu.micros() - cpuBefore : 0;
    long commandsUs = redisCpu != null ? redisCpu.commandMicros() - commandsBefore : 0;
    if (failure.get() != null) throw new Exception(contender.name() + ": " + failure.get(), failure.get());
    long total = Arrays.stream(calls).sum();
    long totalDenied = Arrays.stream(denied).sum();
    int n = Arrays.stream(recorded).sum();
    long[] all = new long[n];
    int at = 0;
    for (int t = 0; t < threads; t++) {
      System.arraycopy(samples[t], 0, all, at, recorded[t]);
      at += recorded[t];
    }
    Arrays.sort(all);
    return Result.of(
        contender.name(), threads, keysName(), total, totalDenied, seconds, all, cpuUs, commandsUs,
        clientNs);
  }
}
