import dev.rl.Decision;
import dev.rl.RateLimiter;
import dev.rl.Store;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The Java worker of scripts/demo: hammers one key through one shared limit and prints what it was
 * admitted as one line of JSON (the protocol is in examples/README.md).
 *
 * <pre>
 *   java ... DemoWorker URL NAME LIMIT KEY ATTEMPTS
 *   java ... DemoWorker redis://127.0.0.1:6379 demo "100/1h" shared 400
 * </pre>
 *
 * It opens its store and limiter, makes one peek (which records nothing) so that its connection is
 * up, prints "ready", and waits for the start signal (a line on stdin, or its end). Errors go to
 * stderr with exit code 1.
 */
public final class DemoWorker {
  public static void main(String[] args) {
    if (args.length != 5) fail("usage: DemoWorker URL NAME LIMIT KEY ATTEMPTS");
    String key = args[3];
    int attempts = 0;
    try {
      attempts = Integer.parseInt(args[4]);
    } catch (NumberFormatException e) {
      fail("ATTEMPTS: " + e.getMessage());
    }
    if (attempts < 0) fail("ATTEMPTS: " + attempts + " is negative");
    try (Store store = Store.open(args[0]);
        RateLimiter limiter =
            store.limiter(Map.of("algorithm", "gcra", "name", args[1], "limit", args[2]))) {
      limiter.peek(key, 0);
      System.out.println("ready");
      System.out.flush();
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
      System.out.println(hammer(limiter, key, attempts));
    } catch (Exception e) {
      fail(e.getMessage() != null ? e.getMessage() : e.toString());
    }
  }

  private static String hammer(RateLimiter limiter, String key, int attempts) {
    int admitted = 0;
    int denied = 0;
    Duration least = null;
    Duration most = null;
    long firstCallUs = nowUs();
    for (int i = 0; i < attempts; i++) {
      Decision d = limiter.tryAcquire(key, 1);
      if (d.allowed()) {
        admitted++;
        continue;
      }
      denied++;
      if (least == null || d.retryAfter().compareTo(least) < 0) least = d.retryAfter();
      if (most == null || d.retryAfter().compareTo(most) > 0) most = d.retryAfter();
    }
    long lastReturnUs = nowUs();
    String retry = least == null ? "[]" : "[" + least.toMillis() + "," + most.toMillis() + "]";
    return String.format(
        "{\"worker\":\"java\",\"pid\":%d,\"admitted\":%d,\"denied\":%d,\"first_call_us\":%d,"
            + "\"last_return_us\":%d,\"retry_after_ms\":%s}",
        ProcessHandle.current().pid(), admitted, denied, firstCallUs, lastReturnUs, retry);
  }

  /** Wall-clock microseconds since 1970: comparable across the demo's processes. */
  private static long nowUs() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
  }

  private static void fail(String message) {
    System.err.println("DemoWorker: " + message);
    System.exit(1);
  }
}
