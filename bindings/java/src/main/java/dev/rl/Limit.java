package dev.rl;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * One limit of a limiter as rl parsed its {@code limit} and {@code burst} settings: {@code limit}
 * units per {@code window}, capacity {@code burst}. {@link Decision#limitIndex()} indexes {@link
 * RateLimiter#limits()}.
 */
public record Limit(long limit, Duration window, long burst) {
  /** rl_jni.c's long[]: limit, window_us, burst for each limit. */
  static List<Limit> of(long[] fields) {
    List<Limit> out = new ArrayList<>(fields.length / 3);
    for (int at = 0; at + 2 < fields.length; at += 3) {
      out.add(new Limit(fields[at], Duration.of(fields[at + 1], ChronoUnit.MICROS), fields[at + 2]));
    }
    return List.copyOf(out);
  }
}
