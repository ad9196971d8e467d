package dev.rl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * The conformance runner of the Java binding (format: conformance/README.md). It drives each case
 * through the public API (Store, RateLimiter), so what it checks is what users get. Every YAML
 * scalar stays the text it was written as (a resolver that resolves nothing), as the format asks.
 * ConformanceTest runs it under JUnit; on its own (scripts/test-arm64 runs it so under an arm64
 * JVM, with the jar on the class path):
 *
 * <pre>
 * java -Drl.root=CHECKOUT -cp rl.jar:test-classes:snakeyaml.jar dev.rl.ConformanceRunner
 *     [--url URL] [--async] [FILE.yaml ...]
 * </pre>
 *
 * prints one line per case and ends with "N passed, N failed".
 */
final class ConformanceRunner {
  private static final AtomicLong CASES = new AtomicLong();

  /** A mistake in a case file, as opposed to a failure of rl. */
  static final class BadCase extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadCase(String message) {
      super(message);
    }
  }

  /** One case of a file. */
  record Case(String file, String name, Map<String, Object> body) {}

  private ConformanceRunner() {}

  /** The command line above; exits 1 when a case failed, 2 on a bad argument. */
  public static void main(String[] args) throws IOException {
    String url = "memory://";
    Mode mode = Mode.SYNC;
    List<Path> files = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--url" -> {
          if (i + 1 == args.length) usage("--url needs a URL");
          url = args[++i];
        }
        case "--async" -> mode = Mode.ASYNC;
        default -> {
          if (args[i].startsWith("-")) usage("unknown option '" + args[i] + "'");
          files.add(Path.of(args[i]));
        }
      }
    }
    if (files.isEmpty()) {
      try (var listing = Files.list(directory())) {
        files = listing.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
      }
    }
    int passed = 0;
    int failed = 0;
    for (Path file : files) {
      List<Case> cases;
      try {
        cases = load(file);
      } catch (IOException | BadCase | org.yaml.snakeyaml.error.YAMLException e) {
        failed++;
        System.out.println("FAIL " + file.getFileName() + ": (file): " + e.getMessage());
        continue;
      }
      for (Case c : cases) {
        String diff;
        try {
          diff = run(c, caseUrl(url), mode);
        } catch (BadCase e) {
          diff = "bad case: " + e.getMessage();
        }
        if (diff.isEmpty()) {
          passed++;
          System.out.println("ok   " + c.file() + ": " + c.name());
        } else {
          failed++;
          System.out.println("FAIL " + c.file() + ": " + c.name() + ": " + diff);
        }
      }
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }

  private static void usage(String problem) {
    System.err.println(
        "ConformanceRunner: "
            + problem
            + " (usage: ConformanceRunner [--url URL] [--async] [FILE.yaml ...])");
    System.exit(2);
  }

  static Path directory() {
    return Path.of(System.getProperty("rl.root", "../.."), "conformance");
  }

  /** The case format (conformance/schema/schema.yaml): every case is checked against it. */
  static Path schemaDirectory() {
    return directory().resolve("schema");
  }

  private static final Map<String, Object> SCHEMA = loadSchema();
  private static final Map<String, Object> SCALARS = map(SCHEMA.get("scalars"), "scalars");
  private static final Map<String, Object> RECORDS = map(SCHEMA.get("records"), "records");

  private static Map<String, Object> loadSchema() {
    try {
      return map(text().load(Files.readString(schemaDirectory().resolve("schema.yaml"))), "schema");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** value checked against the schema's type, with its defaults filled in. */
  static Object check(Object value, String type, String where) {
    if (SCALARS.containsKey(type)) {
      if (!(value instanceof String text) || !text.matches((String) SCALARS.get(type))) {
        String article = type.equals("int64") ? "an " : "a ";
        throw new BadCase(where + ": '" + value + "' is not " + article + type);
      }
      return value;
    }
    Map<String, Object> record = map(RECORDS.get(type), type);
    Map<String, Object> given = map(value, where);
    Map<String, Object> fields =
        record.containsKey("fields") ? map(record.get("fields"), type) : Map.of();
    for (Map.Entry<String, Object> entry : given.entrySet()) {
      String field = entry.getKey();
      String at = where + "." + field;
      Map<String, Object> spec =
          fields.containsKey(field)
              ? map(fields.get(field), field)
              : record.containsKey("any_field") ? Map.of("type", record.get("any_field")) : null;
      if (spec == null) throw new BadCase(where + ": unknown field '" + field + "'");
      String fieldType = (String) spec.get("type");
      if (isTrue(spec, "list")) {
        if (!(entry.getValue() instanceof List<?> items)) throw new BadCase(at + " must be a list");
        for (int i = 0; i < items.size(); i++) check(items.get(i), fieldType, at + "[" + (i + 1) + "]");
      } else {
        check(entry.getValue(), fieldType, at);
      }
      if (spec.containsKey("with") && !given.containsKey(spec.get("with"))) {
        throw new BadCase(at + " without " + spec.get("with"));
      }
    }
    List<String> verbs = new ArrayList<>();
    List<String> checks = new ArrayList<>();
    boolean hasVerbs = false;
    for (Map.Entry<String, Object> entry : fields.entrySet()) {
      Map<String, Object> spec = map(entry.getValue(), entry.getKey());
      boolean there = given.containsKey(entry.getKey());
      if (isTrue(spec, "required") && !there) throw new BadCase(where + ": no " + entry.getKey());
      hasVerbs |= isTrue(spec, "verb");
      if (there && isTrue(spec, "verb")) verbs.add(entry.getKey());
      if (there && isTrue(spec, "of_decision")) checks.add(entry.getKey());
    }
    for (String rule : List.of("exactly_one_of", "at_most_one_of")) {
      if (!(record.get(rule) instanceof List<?> group)) continue;
      long count = group.stream().filter(given::containsKey).count();
      if (count > 1 || (count == 0 && rule.equals("exactly_one_of"))) {
        List<String> names = group.stream().map(String::valueOf).toList();
        throw new BadCase(where + ": " + rule.replace('_', ' ') + " " + String.join(", ", names));
      }
    }
    if (hasVerbs) {
      if (verbs.size() != 1) throw new BadCase(where + ": needs exactly one verb");
      if (!checks.isEmpty() && !isTrue(map(fields.get(verbs.get(0)), "verb"), "decides")) {
        throw new BadCase(where + ": " + verbs.get(0) + " returns no decision for " + checks.get(0));
      }
    }
    fields.forEach(
        (field, spec) -> {
          Object fallback = map(spec, field).get("default");
          if (fallback != null) given.putIfAbsent(field, fallback);
        });
    return value;
  }

  private static boolean isTrue(Map<String, Object> spec, String attribute) {
    return "true".equals(spec.get(attribute));
  }

  /** The verb of a checked step: its one field with verb: true. */
  private static String verbOf(Map<String, Object> step) {
    Map<String, Object> fields = map(map(RECORDS.get("step"), "step").get("fields"), "step");
    for (String field : step.keySet()) {
      if (isTrue(map(fields.get(field), field), "verb")) return field;
    }
    throw new BadCase("a step with no verb");
  }

  private static String typeOf(String record, String field) {
    Map<String, Object> fields = map(map(RECORDS.get(record), record).get("fields"), record);
    return (String) map(fields.get(field), field).get("type");
  }

  /** A YAML reader that keeps every scalar the text it was written as. */
  private static Yaml text() {
    Resolver textOnly =
        new Resolver() {
          @Override
          protected void addImplicitResolvers() {}
        };
    LoaderOptions options = new LoaderOptions();
    return new Yaml(
        new SafeConstructor(options),
        new Representer(new DumperOptions()),
        new DumperOptions(),
        options,
        textOnly);
  }

  static List<Case> load(Path file) throws IOException {
    Object doc = text().load(Files.readString(file, StandardCharsets.UTF_8));
    String name = file.getFileName().toString();
    if (!(doc instanceof Map<?, ?> map) || !(map.get("cases") instanceof List<?> cases)) {
      throw new BadCase(name + ": no 'cases:' list");
    }
    List<Case> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Object item : cases) {
      Map<String, Object> body = map(item, "case");
      String caseName = String.valueOf(body.get("name"));
      if (!names.add(caseName)) throw new BadCase(name + ": " + caseName + " is used twice");
      out.add(new Case(name, caseName, body));
    }
    return out;
  }

  /** The URL of a case: clock=manual, and on Redis a key prefix unique to the run and case. */
  static String caseUrl(String base) {
    String url = base + (base.contains("?") ? "&" : "?") + "clock=manual";
    if (base.startsWith("redis")) {
      url += "&prefix=ctjava" + ProcessHandle.current().pid() + "x" + System.nanoTime() + "n"
          + CASES.incrementAndGet();
    }
    return url;
  }

  /** Which calls drive the limiter: the blocking ones, or the *Async ones joined. */
  enum Mode {
    SYNC,
    ASYNC
  }

  /** Runs one case on a fresh store at url: "" when it passed, else what differed. */
  static String run(Case c, String url, Mode mode) {
    check(c.body(), "case", "case");
    try (Store store = Store.open(url)) {
      store.clockSet(toLong(c.body().get("clock"), "clock"));
      boolean setupFails = c.body().containsKey("error");
      Map<String, String> text = new LinkedHashMap<>();
      map(c.body().get("limiter"), "limiter").forEach((k, v) -> text.put(k, String.valueOf(v)));
      long processes = toLong(c.body().get("processes"), "processes");
      if (processes < 1 || processes > 64) {
        throw new BadCase("processes: " + processes + " is not 1 to 64");
      }
      // One limiter per process of the case, each its own (its own leases).
      List<RateLimiter> limiters = new ArrayList<>();
      try {
        Outcome made = null;
        for (long p = 0; p < processes; p++) {
          made = outcome(() -> store.limiter(text));
          if (made.error != null) break;
          limiters.add((RateLimiter) made.value);
        }
        String diff = compareStatus(c.body(), made);
        if (!diff.isEmpty()) return "limiter: " + diff;
        if (setupFails) return "";
        return runSteps(store, limiters, c.body().get("steps"), mode);
      } finally {
        limiters.forEach(RateLimiter::close);
      }
    }
  }

  /** The store's lease counters (StoreStats.leases) by the format's names. */
  private static String compareStats(Store store, Object wantNode, String where) {
    StoreStats.Leases leases = store.stats().leases();
    Map<String, Long> got = new LinkedHashMap<>();
    got.put("leases_taken", leases.taken());
    got.put("lease_units_leased", leases.unitsLeased());
    got.put("lease_units_unused", leases.unitsUnused());
    got.put("lease_units_returned", leases.unitsReturned());
    got.put("lease_decisions", leases.decisions());
    List<String> diffs = new ArrayList<>();
    for (Map.Entry<String, Object> e : map(wantNode, where).entrySet()) {
      long want = toLong(e.getValue(), where + "." + e.getKey());
      long value = got.get(e.getKey());
      if (want != value) diffs.add(e.getKey() + ": expected " + want + ", got " + value);
    }
    return diffs.isEmpty() ? "" : where + ": " + String.join(", ", diffs);
  }

  private record Outcome(Object value, RateLimitException error) {}

  private static Outcome outcome(Supplier<Object> work) {
    try {
      return new Outcome(work.get(), null);
    } catch (RateLimitException e) {
      return new Outcome(null, e);
    }
  }

  private static String runSteps(
      Store store, List<RateLimiter> limiters, Object stepsNode, Mode mode) {
    List<?> steps = (List<?>) stepsNode;
    for (int index = 0; index < steps.size(); index++) {
      Map<String, Object> step = map(steps.get(index), "step " + (index + 1));
      String verb = verbOf(step);
      String where = "step " + (index + 1) + " (" + verb + ")";
      long process = toLong(step.get("process"), where + ".process");
      if (process < 0 || process >= limiters.size()) {
        throw new BadCase(
            where + ".process: " + process + " is not below processes (" + limiters.size() + ")");
      }
      if (verb.equals("stats")) {
        String diff = compareStats(store, step.get("stats"), where);
        if (!diff.isEmpty()) return diff;
        continue;
      }
      RateLimiter limiter = limiters.get((int) process);
      long repeat = toLong(step.get("repeat"), "repeat");
      if (repeat < 1) throw new BadCase(where + ".repeat must be at least 1");
      long allowed = 0; // over the repeats, for allowed_count
      for (long i = 1; i <= repeat; i++) {
        String at = repeat == 1 ? where : where + " #" + i + " of " + repeat;
        Outcome outcome = call(store, limiter, verb, step.get(verb), at, mode);
        String diff = compareStatus(step, outcome);
        if (!diff.isEmpty()) return at + ": " + diff;
        if (outcome.error != null) continue;
        if (outcome.value instanceof Decision d && d.allowed()) allowed++;
        if (step.containsKey("each")) {
          diff = compareDecision(step.get("each"), (Decision) outcome.value, at + ".each");
          if (!diff.isEmpty()) return at + ": " + diff;
        }
        if (i == repeat && step.containsKey("expect")) {
          diff = compareDecision(step.get("expect"), (Decision) outcome.value, at + ".expect");
          if (!diff.isEmpty()) return at + ": " + diff;
        }
      }
      if (step.containsKey("allowed_count")) {
        long want = toLong(step.get("allowed_count"), where + ".allowed_count");
        if (want != allowed) {
          return where + ": allowed_count: expected " + want + ", got " + allowed;
        }
      }
    }
    return "";
  }

  private static Outcome call(
      Store store, RateLimiter limiter, String verb, Object args, String where, Mode mode) {
    if (verb.equals("advance")) {
      long delta = toLong(args, where);
      return outcome(
          () -> {
            store.clockAdvance(delta);
            return null;
          });
    }
    Map<String, Object> request = map(args, where);
    byte[] key = keyOf(request, where);
    if (verb.equals("reset")) {
      if (mode == Mode.ASYNC) return outcome(() -> joined(limiter.resetAsync(key)));
      return outcome(
          () -> {
            limiter.reset(key);
            return null;
          });
    }
    long cost = toLong(request.get("cost"), where + ".cost");
    if (mode == Mode.ASYNC) {
      return switch (verb) {
        case "acquire" -> outcome(() -> joined(limiter.tryAcquireAsync(key, cost)));
        case "peek" -> outcome(() -> joined(limiter.peekAsync(key, cost)));
        default -> outcome(() -> joined(limiter.refundAsync(key, cost)));
      };
    }
    return switch (verb) {
      case "acquire" -> outcome(() -> limiter.tryAcquire(key, cost));
      case "peek" -> outcome(() -> limiter.peek(key, cost));
      default -> outcome(() -> limiter.refund(key, cost));
    };
  }

  /** The future's value, its RateLimitException thrown as is. */
  private static Object joined(java.util.concurrent.CompletableFuture<?> future) {
    try {
      return future.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RateLimitException cause) throw cause;
      throw e;
    }
  }

  private static byte[] keyOf(Map<String, Object> request, String where) {
    if (request.containsKey("key")) {
      return String.valueOf(request.get("key")).getBytes(StandardCharsets.UTF_8);
    }
    if (request.containsKey("key_hex")) {
      return HexFormat.of().parseHex(String.valueOf(request.get("key_hex")));
    }
    if (request.containsKey("key_len")) {
      long length = toLong(request.get("key_len"), where + ".key_len");
      if (length < 0 || length > (1 << 20)) throw new BadCase(where + ".key_len: out of range");
      return "x".repeat((int) length).getBytes(StandardCharsets.US_ASCII);
    }
    return new byte[0];
  }

  private static String compareStatus(Map<String, Object> node, Outcome outcome) {
    Object error = node.get("error");
    Object contains = node.get("message_contains");
    RateLimitException failure = outcome.error;
    if (error == null) {
      return failure == null ? "" : "expected success, got " + failure.getMessage();
    }
    if (failure == null) return "expected " + error + ", got RL_OK";
    if (!failure.status().cName().equals(error)) {
      return "expected " + error + ", got " + failure.getMessage();
    }
    if (contains != null && !failure.getMessage().contains(String.valueOf(contains))) {
      return "message '" + failure.getMessage() + "' does not contain '" + contains + "'";
    }
    return "";
  }

  private static Map<String, Long> fields(Decision d) {
    Map<String, Long> f = new LinkedHashMap<>();
    f.put("allowed", d.allowed() ? 1L : 0L);
    f.put("limit", d.limit());
    f.put("remaining", d.remaining());
    f.put("retry_after_us", d.retryAfter() == Decision.NEVER ? -1 : micros(d.retryAfter()));
    f.put("reset_after_us", micros(d.resetAfter()));
    f.put("limit_index", (long) d.limitIndex());
    return f;
  }

  private static long micros(java.time.Duration d) {
    return d.getSeconds() * 1_000_000 + d.getNano() / 1_000;
  }

  private static String compareDecision(Object expectNode, Decision decision, String where) {
    Map<String, Object> expect = map(expectNode, where);
    Map<String, Long> got = fields(decision);
    List<String> diffs = new ArrayList<>();
    expect.forEach(
        (field, text) -> {
          String type = typeOf("decision", field);
          if (type.equals("number")) { // suppression_factor
            // Multiples of 2^-24: the YAML's decimal is exact when it is one.
            double want = Double.parseDouble((String) text);
            if (want != decision.suppressionFactor()) {
              diffs.add(field + ": expected " + text + ", got " + decision.suppressionFactor());
            }
            return;
          }
          long want = type.equals("bool") ? ("true".equals(text) ? 1 : 0) : toLong(text, where);
          if (want != got.get(field)) {
            diffs.add(field + ": expected " + text + ", got " + got.get(field));
          }
        });
    return diffs.isEmpty() ? "" : String.join(", ", diffs) + " in " + got;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object node, String where) {
    if (!(node instanceof Map<?, ?>)) throw new BadCase(where + " must be a map");
    return (Map<String, Object>) node;
  }

  private static long toLong(Object text, String what) {
    try {
      return Long.parseLong(String.valueOf(text));
    } catch (NumberFormatException e) {
      throw new BadCase(what + ": '" + text + "' is not an int64");
    }
  }
}
