package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Handles, threads and futures across open, close and JVM exit. */
class LifecycleTest {
  private static final int STORES = 10_000;

  @Test
  void tenThousandStoresLeaveNoNativeHandleThreadOrMemoryBehind() throws Exception {
    openUseClose(500); // warm-up: class loading, JIT, malloc arenas
    System.gc();
    long handles = NativeHandle.live();
    long tasks = osThreads();
    long javaThreads = Thread.activeCount();
    long rss = rssKb();
    openUseClose(STORES);
    System.gc();
    long grownKb = rssKb() - rss;
    System.out.printf(
        "lifecycle: %d stores opened, used and closed: RSS %+d kB, OS threads %d -> %d%n",
        STORES, grownKb, tasks, osThreads());
    assertEquals(handles, NativeHandle.live(), "native handles not freed");
    assertEquals(tasks, osThreads(), "OS threads left behind (an rl thread not ended or detached)");
    assertEquals(javaThreads, Thread.activeCount(), "Java threads left attached");
    assertTrue(grownKb < 16 * 1024, "RSS grew by " + grownKb + " kB over " + STORES + " stores");
  }

  // Opens n stores; each answers one async call (so rl's thread attaches to the JVM) and closes.
  private static void openUseClose(int n) {
    for (int i = 0; i < n; i++) {
      try (Store store = Store.open("memory://");
          RateLimiter limiter = store.limiter(Map.of("limit", "10/s"))) {
        assertTrue(limiter.tryAcquireAsync("k", 1).join().allowed());
      }
    }
  }

  @Test
  void closeWithCallsInFlightCompletesEachFutureOnceWithShutdown() throws Exception {
    Store redis = Store.open(TestRedis.fresh(""));
    Store memory = Store.open("memory://");
    RateLimiter onRedis = redis.limiter(Map.of("limit", "100000/h"));
    // 1/s with a 1 h wait: every wait but the first sleeps on rl's timer until close.
    RateLimiter waiting = memory.limiter(Map.of("limit", "1/s"));
    long before = Native.COMPLETIONS.get();
    List<CompletableFuture<Decision>> calls = new ArrayList<>();
    for (int i = 0; i < 2000; i++) calls.add(onRedis.tryAcquireAsync("k" + (i % 50), 1));
    List<CompletableFuture<Decision>> waits = new ArrayList<>();
    for (int i = 0; i < 200; i++) waits.add(waiting.acquireAsync("w", 1, Duration.ofHours(1)));
    redis.close();
    memory.close();
    assertEquals(calls.size() + waits.size(), Native.COMPLETIONS.get() - before);
    int shutdown = 0;
    for (CompletableFuture<Decision> f : concat(calls, waits)) {
      assertTrue(f.isDone(), "a future still pending after close returned");
      if (f.isCompletedExceptionally()) {
        CompletionException e =
            org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
        assertEquals(Status.SHUTDOWN, ((RateLimitException) e.getCause()).status());
        shutdown++;
      }
    }
    System.out.printf(
        "close in flight: %d calls and %d waits, %d ended with SHUTDOWN%n",
        calls.size(), waits.size(), shutdown);
    assertTrue(shutdown >= waits.size() - 1, "waits should end with SHUTDOWN: " + shutdown);
    onRedis.close();
    waiting.close();
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  @Test
  void aJvmExitsCleanlyWithCallsInFlight() throws Exception {
    for (String mode : List.of("return", "exit")) {
      String java = ProcessHandle.current().info().command().orElse("java");
      Process child =
          new ProcessBuilder(
                  java,
                  "-Xcheck:jni",
                  "-Drl.jni.path=" + System.getProperty("rl.jni.path"),
                  "-cp",
                  System.getProperty("rl.test.classpath"),
                  ExitWithCallsInFlight.class.getName(),
                  TestRedis.fresh(""),
                  mode)
              .redirectErrorStream(true)
              .start();
      long start = System.nanoTime();
      boolean ended = child.waitFor(60, TimeUnit.SECONDS);
      String output = new String(child.getInputStream().readAllBytes());
      if (!ended) child.destroyForcibly();
      assertTrue(ended, mode + ": the JVM did not exit: " + output);
      System.out.printf(
          "JVM exit (%s) with calls in flight: exit %d after %d ms%n",
          mode, child.exitValue(), (System.nanoTime() - start) / 1_000_000);
      assertEquals(0, child.exitValue(), mode + ": " + output);
      assertTrue(output.contains("in flight"), output);
    }
  }

  private static long osThreads() throws IOException {
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      return tasks.count();
    }
  }

  private static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }
}
