package dev.rl;

import java.time.Duration;
import java.util.Map;

/**
 * A program that leaves calls in flight and ends (args: redis URL, "return" from main or "exit"
 * with System.exit): LifecycleTest checks that its JVM exits at once with status 0.
 */
public final class ExitWithCallsInFlight {
  private ExitWithCallsInFlight() {}

  public static void main(String[] args) {
    Store redis = Store.open(args[0]);
    RateLimiter onRedis = redis.limiter(Map.of("limit", "1000000/h"));
    Store memory = Store.open("memory://");
    RateLimiter waiting = memory.limiter(Map.of("limit", "1/s"));
    for (int i = 0; i < 5000; i++) onRedis.tryAcquireAsync("k" + (i % 100), 1);
    for (int i = 0; i < 100; i++) waiting.acquireAsync("w", 1, Duration.ofHours(1));
    System.out.println("calls in flight");
    System.out.flush();
    if (args[1].equals("exit")) System.exit(0);
  }
}
