package dev.rl.bench;

import java.util.Arrays;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One thread keeping {@code inFlight} asynchronous decisions in flight for a duration, on distinct
 * keys: the shape of a Java service that does not block a thread per call. The caller blocks only
 * when all {@code inFlight} are out, so no thread sleeps per decision. Reported like a {@link
 * Phase} of 1 thread, under the contender's name + " async".
 */
record InFlightPhase(int inFlight, int keys, long durationMs) {
  private static final int SAMPLES = 1 << 22;

  Phase.Result run(AsyncContender contender, RedisCpu redisCpu) throws Exception {
    Semaphore free = new Semaphore(inFlight);
    long[] samples = new long[SAMPLES];
    AtomicInteger recorded = new AtomicInteger();
    AtomicLong denied = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long cpuBefore = redisCpu != null ? redisCpu.micros() : 0;
    long commandsBefore = redisCpu != null ? redisCpu.commandMicros() : 0;
    long clientBefore = Phase.PROCESS.getProcessCpuTime();
    long began = System.nanoTime();
    long until = began + durationMs * 1_000_000L;
    long calls = 0;
    int next = 0;
    while (failure.get() == null && System.nanoTime() < until) {
      free.acquire();
      String key = "k" + next;
      next = next + 1 == keys ? 0 : next + 1;
      long sent = System.nanoTime();
      calls++;
      contender
          .decideAsync(key)
          .whenComplete(
              (allowed, error) -> {
                long took = System.nanoTime() - sent;
                if (error != null) {
                  failure.compareAndSet(null, error);
                } else if (!allowed) {
                  denied.incrementAndGet();
                }
                int at = recorded.getAndIncrement();
                if (at < SAMPLES) samples[at] = took;
                free.release();
              });
    }
    free.acquire(inFlight); // every call answered
    double seconds = (System.nanoTime() - began) / 1e9;
    long clientNs = Phase.PROCESS.getProcessCpuTime() - clientBefore;
    long cpuUs = redisCpu != null ? redisCpu.micros() - cpuBefore : 0;
    long commandsUs = redisCpu != null ? redisCpu.commandMicros() - commandsBefore : 0;
    if (failure.get() != null) {
      throw new Exception(contender.name() + " async: " + failure.get(), failure.get());
    }
    long[] all = Arrays.copyOf(samples, (int) Math.min(SAMPLES, calls));
    Arrays.sort(all);
    return Phase.Result.of(
        contender.name() + " async", 1, "distinct", calls, denied.get(), seconds, all, cpuUs,
        commandsUs, clientNs);
  }
}
