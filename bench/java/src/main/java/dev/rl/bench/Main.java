package dev.rl.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * rl's Java binding beside Bucket4j and a Lettuce sliding-window log, against one redis-server:
 * each at 1 thread (p50/p95/p99) and 64 threads (decisions/s, p99) on distinct keys and on one
 * hot key, and the two sliding logs from one thread with 64 asynchronous calls in flight; every
 * limit far above the load. Prints a JSON line per measurement; bench/table.py holds the rows and
 * goals of the table bench/run prints from them.
 *
 * <pre>
 *   java -cp ... dev.rl.bench.Main REDIS_URL [SECONDS_PER_PHASE]
 * </pre>
 */
public final class Main {
  static final int KEYS = 1000;
  static final int THREADS = 64;
  // Far above any load here: nothing is denied, every call does the full work.
  static final long PER_SECOND = 10_000_000L;
  static final long WINDOW_MS = 1000;
  static final java.util.Set<String> IN_FLIGHT_TOO =
      java.util.Set.of("rl sliding_log", "lettuce sliding log");

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: Main REDIS_URL [SECONDS_PER_PHASE]");
      System.exit(2);
    }
    String url = args[0];
    long phaseMs = (long) (1000 * (args.length > 1 ? Double.parseDouble(args[1]) : 3));
    // Each contender with the server it runs on (its Redis CPU is read there).
    List<Map.Entry<String, Supplier<Contender>>> contenders =
        new ArrayList<>(
            List.of(
                Map.entry(url, () -> new RlContender(url, "gcra", PER_SECOND + "/1s")),
                Map.entry(url, () -> new Bucket4jContender(url, PER_SECOND)),
                Map.entry(
                    url,
                    () -> new RlContender(url, "sliding_log", PER_SECOND + "/" + WINDOW_MS + "ms")),
                Map.entry(url, () -> new LettuceSlidingLog(url, WINDOW_MS, PER_SECOND))));
    // bench/run: a server with rl's Redis module; rl there with script_mode=module.
    String moduleUrl = System.getenv().getOrDefault("RL_BENCH_MODULE_URL", "");
    if (!moduleUrl.isEmpty()) {
      String module = "&script_mode=module";
      contenders.add(
          Map.entry(
              moduleUrl,
              () -> new RlContender(moduleUrl, "gcra", PER_SECOND + "/1s", module, " module")));
      contenders.add(
          Map.entry(
              moduleUrl,
              () ->
                  new RlContender(
                      moduleUrl,
                      "sliding_log",
                      PER_SECOND + "/" + WINDOW_MS + "ms",
                      module,
                      " module")));
    }
    List<Phase> phases =
        List.of(
            new Phase(1, false, KEYS, phaseMs),
            new Phase(THREADS, false, KEYS, phaseMs),
            new Phase(THREADS, true, KEYS, phaseMs));
    Phase warmUp = new Phase(THREADS, false, KEYS, Math.max(500, phaseMs / 3));
    InFlightPhase inFlight = new InFlightPhase(THREADS, KEYS, phaseMs);
    for (Map.Entry<String, Supplier<Contender>> make : contenders) {
      try (Contender contender = make.getValue().get();
          RedisCpu redisCpu = new RedisCpu(make.getKey())) {
        warmUp.run(contender, null); // JIT, connections, scripts loaded
        for (Phase phase : phases) {
          Phase.Result result = phase.run(contender, redisCpu);
          System.out.println(result.json());
        }
        // The sliding logs also from one thread with 64 calls in flight (no thread per call).
        if (contender instanceof AsyncContender async && IN_FLIGHT_TOO.contains(contender.name())) {
          System.out.println(inFlight.run(async, redisCpu).json());
        }
        if (contender instanceof RlContender rl) System.err.println(rl.name() + ": " + rl.stats());
      }
    }
  }
}
