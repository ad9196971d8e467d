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
 */
final class ConformanceRunner {
  private static final Set<String> CASE_FIELDS =
      Set.of("name", "limiter", "clock", "error", "message_contains", "steps");
  private static final Set<String> VERBS = Set.of("acquire", "peek", "refund", "reset", "advance");
  private static final Set<String> STEP_MODIFIERS =
      Set.of("repeat", "each", "expect", "error", "message_contains", "allowed_count");
  private static final Set<String> REQUEST_FIELDS = Set.of("key", "key_hex", "key_len", "cost");
  private static final Set<String> DECISION_FIELDS =
      Set.of(
          "allowed",
          "limit",
          "remaining",
          "retry_after_us",
          "reset_after_us",
          "limit_index",
          "suppression_factor");
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

  static Path directory() {
    return Path.of(System.getProperty("rl.root", "../.."), "conformance");
  }

  @SuppressWarnings("unchecked")
  static List<Case> load(Path file) throws IOException {
    Resolver textOnly =
        new Resolver() {
          @Override
          protected void addImplicitResolvers() {}
        };
    LoaderOptions options = new LoaderOptions();
    Yaml yaml =
        new Yaml(
            new SafeConstructor(options),
            new Representer(new DumperOptions()),
            new DumperOptions(),
            options,
            textOnly);
    Object doc = yaml.load(Files.readString(file, StandardCharsets.UTF_8));
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
    checkFields(c.body(), CASE_FIELDS, "case");
    try (Store store = Store.open(url)) {
      Object clock = c.body().get("clock");
      store.clockSet(clock == null ? 0 : toLong(clock, "clock"));
      boolean setupFails = c.body().containsKey("error");
      if (setupFails == c.body().containsKey("steps")) {
        throw new BadCase("a case needs steps or an error, not both");
      }
      Map<String, Object> settings = map(c.body().get("limiter"), "limiter");
      Map<String, String> text = new LinkedHashMap<>();
      settings.forEach((k, v) -> text.put(k, String.valueOf(v)));
      Outcome made = outcome(() -> store.limiter(text));
      String diff = compareStatus(c.body(), made);
      if (!diff.isEmpty()) return "limiter: " + diff;
      if (setupFails) return "";
      try (RateLimiter limiter = (RateLimiter) made.value) {
        return runSteps(store, limiter, c.body().get("steps"), mode);
      }
    }
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
      Store store, RateLimiter limiter, Object stepsNode, Mode mode) {
    if (!(stepsNode instanceof List<?> steps)) throw new BadCase("steps must be a list");
    for (int index = 0; index < steps.size(); index++) {
      Map<String, Object> step = map(steps.get(index), "step " + (index + 1));
      List<String> verbs = new ArrayList<>();
      for (String field : step.keySet()) {
        if (VERBS.contains(field)) verbs.add(field);
        else if (!STEP_MODIFIERS.contains(field)) {
          throw new BadCase("step " + (index + 1) + ": unknown field '" + field + "'");
        }
      }
      if (verbs.size() != 1) throw new BadCase("step " + (index + 1) + ": needs exactly one verb");
      String verb = verbs.get(0);
      String where = "step " + (index + 1) + " (" + verb + ")";
      long repeat = step.containsKey("repeat") ? toLong(step.get("repeat"), "repeat") : 1;
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
    Map<String, Object> request = args == null ? Map.of() : map(args, where);
    checkFields(request, REQUEST_FIELDS, where);
    byte[] key = keyOf(request, where);
    if (verb.equals("reset")) {
      if (request.containsKey("cost")) throw new BadCase(where + ": reset takes no cost");
      if (mode == Mode.ASYNC) return outcome(() -> joined(limiter.resetAsync(key)));
      return outcome(
          () -> {
            limiter.reset(key);
            return null;
          });
    }
    long cost = request.containsKey("cost") ? toLong(request.get("cost"), where + ".cost") : 1;
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
    int given = 0;
    for (String f : List.of("key", "key_hex", "key_len")) if (request.containsKey(f)) given++;
    if (given > 1) throw new BadCase(where + ": give only one of key, key_hex, key_len");
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
      if (contains != null) throw new BadCase("message_contains without error");
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

  private static double toDouble(Object text, String where) {
    try {
      return Double.parseDouble(String.valueOf(text));
    } catch (NumberFormatException e) {
      throw new BadCase(where + ": '" + text + "' is not a number");
    }
  }

  private static long micros(java.time.Duration d) {
    return d.getSeconds() * 1_000_000 + d.getNano() / 1_000;
  }

  private static String compareDecision(Object expectNode, Decision decision, String where) {
    Map<String, Object> expect = map(expectNode, where);
    checkFields(expect, DECISION_FIELDS, where);
    Map<String, Long> got = fields(decision);
    List<String> diffs = new ArrayList<>();
    expect.forEach(
        (field, text) -> {
          if (field.equals("suppression_factor")) {
            // Multiples of 2^-24: the YAML's decimal is exact when it is one.
            double want = toDouble(text, where);
            if (want != decision.suppressionFactor()) {
              diffs.add(field + ": expected " + text + ", got " + decision.suppressionFactor());
            }
            return;
          }
          long want =
              field.equals("allowed") ? (toBool(text, where) ? 1 : 0) : toLong(text, where);
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

  private static void checkFields(Map<String, Object> map, Set<String> known, String where) {
    for (String field : map.keySet()) {
      if (!known.contains(field)) throw new BadCase(where + ": unknown field '" + field + "'");
    }
  }

  private static long toLong(Object text, String what) {
    try {
      return Long.parseLong(String.valueOf(text));
    } catch (NumberFormatException e) {
      throw new BadCase(what + ": '" + text + "' is not an int64");
    }
  }

  private static boolean toBool(Object text, String what) {
    if ("true".equals(text)) return true;
    if ("false".equals(text)) return false;
    throw new BadCase(what + ": '" + text + "' is not true or false");
  }
}
