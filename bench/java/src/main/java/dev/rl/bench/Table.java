package dev.rl.bench;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** The Markdown table of bench/README.md: each figure of rl against its peer of the same run. */
final class Table {
  private Table() {}

  /** One row: a figure of two libraries and the goal for their ratio (rl / peer). */
  private record Row(
      String figure, String unit, String rl, String peer, int threads, String keys,
      ToDoubleFunction<Phase.Result> value, String op, double goal) {}

  private static final ToDoubleFunction<Phase.Result> RATE = Phase.Result::perSecond;
  private static final ToDoubleFunction<Phase.Result> P50 = Phase.Result::p50us;
  private static final ToDoubleFunction<Phase.Result> P95 = Phase.Result::p95us;
  private static final ToDoubleFunction<Phase.Result> P99 = Phase.Result::p99us;
  private static final ToDoubleFunction<Phase.Result> REDIS = Phase.Result::redisUsPerDecision;
  private static final ToDoubleFunction<Phase.Result> CLIENT = Phase.Result::clientUsPerDecision;
  private static final String LOG = "lettuce sliding log";

  private static final List<Row> ROWS =
      List.of(
          new Row("sliding_log 64 threads distinct keys, decisions/s; peer: Lettuce sliding log",
              "/s", "rl sliding_log", LOG, 64, "distinct", RATE, ">=", 1.5),
          new Row("sliding_log 64 threads one hot key, decisions/s; peer: Lettuce sliding log",
              "/s", "rl sliding_log", LOG, 64, "hot", RATE, ">=", 1.5),
          new Row("sliding_log 64 threads distinct keys, p99; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 64, "distinct", P99, "", 0),
          new Row("sliding_log 64 threads distinct keys, Redis CPU/decision; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 64, "distinct", REDIS, "", 0),
          new Row("sliding_log 64 threads distinct keys, client (JVM) CPU/decision; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 64, "distinct", CLIENT, "", 0),
          new Row("sliding_log 1 thread, p50; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 1, "distinct", P50, "<=", 1),
          new Row("sliding_log 1 thread, p95; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 1, "distinct", P95, "", 0),
          new Row("sliding_log 1 thread, p99; peer: Lettuce sliding log",
              "us", "rl sliding_log", LOG, 1, "distinct", P99, "", 0),
          new Row("gcra 64 threads distinct keys, decisions/s; peer: Bucket4j",
              "/s", "rl gcra", "bucket4j", 64, "distinct", RATE, ">=", 3),
          new Row("gcra 64 threads one hot key, decisions/s; peer: Bucket4j",
              "/s", "rl gcra", "bucket4j", 64, "hot", RATE, ">=", 20),
          new Row("gcra 64 threads distinct keys, p99; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 64, "distinct", P99, "", 0),
          new Row("gcra 64 threads one hot key, p99; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 64, "hot", P99, "", 0),
          new Row("gcra 64 threads distinct keys, Redis CPU/decision; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 64, "distinct", REDIS, "", 0),
          new Row("gcra 64 threads distinct keys, client (JVM) CPU/decision; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 64, "distinct", CLIENT, "", 0),
          new Row("gcra 1 thread, p50; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 1, "distinct", P50, "", 0),
          new Row("gcra 1 thread, p99; peer: Bucket4j",
              "us", "rl gcra", "bucket4j", 1, "distinct", P99, "", 0),
          new Row("gcra 1 thread, decisions/s; peer: Bucket4j",
              "/s", "rl gcra", "bucket4j", 1, "distinct", RATE, "", 0));

  static void print(List<Phase.Result> results) {
    System.out.println("| figure | rl | peer | ratio | goal | met? |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | --- |");
    for (Row row : ROWS) {
      Phase.Result a = find(results, row.rl, row.threads, row.keys);
      Phase.Result b = find(results, row.peer, row.threads, row.keys);
      if (a == null || b == null) {
        System.out.printf("| %s (%s) | no data | no data | | | |%n", row.figure, row.unit);
        continue;
      }
      double x = row.value.applyAsDouble(a);
      double y = row.value.applyAsDouble(b);
      double ratio = x / y;
      String goal = row.op.isEmpty() ? "" : row.op + " " + show(row.goal, "") + "x";
      String met =
          row.op.isEmpty() ? "" : (row.op.equals(">=") ? ratio >= row.goal : ratio <= row.goal) ? "yes" : "**no**";
      System.out.printf(
          Locale.ROOT, "| %s (%s) | %s | %s | %.2fx | %s | %s |%n",
          row.figure, row.unit, show(x, row.unit), show(y, row.unit), ratio, goal, met);
    }
  }

  private static Phase.Result find(List<Phase.Result> results, String library, int threads, String keys) {
    for (Phase.Result r : results) {
      if (r.library().equals(library) && r.threads() == threads && r.keys().equals(keys)) return r;
    }
    return null;
  }

  private static String show(double value, String unit) {
    if (unit.equals("/s")) return String.format(Locale.ROOT, "%,.0f", value);
    return value >= 10 ? String.format(Locale.ROOT, "%,.1f", value) : String.format(Locale.ROOT, "%.2f", value);
  }
}
