package dev.rl;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * One decision. Being denied is a decision ({@code allowed() == false}), not an exception.
 *
 * @param allowed the request was admitted and its cost recorded
 * @param limit the limit (units per window) that decided
 * @param remaining units one more request could take right now
 * @param retryAfter zero when allowed; else the time until the same request would be admitted;
 *     {@link #NEVER} when it never can be (cost above the burst)
 * @param resetAfter time until the key is back to full capacity
 * @param source which path decided
 * @param limitIndex which limit decided, 0-based in the order of the limit setting
 * @param suppressionFactor algorithm {@code suppressed}: the share of calls suppressed when this one
 *     was decided, 0 (admitted outright) to 1 (denied outright, above the hard limit); in between
 *     the call was admitted with probability {@code 1 - suppressionFactor}. 0 for every other
 *     algorithm.
 */
public record Decision(
    boolean allowed,
    long limit,
    long remaining,
    Duration retryAfter,
    Duration resetAfter,
    Source source,
    int limitIndex,
    double suppressionFactor) {
  /** The retryAfter of a request that can never be admitted. */
  public static final Duration NEVER = ChronoUnit.FOREVER.getDuration();

  /** The decision at index i of rl_jni.c's long[]. */
  static Decision of(long[] fields, int i) {
    int at = i * Native.DECISION_FIELDS;
    long retryUs = fields[at + 3];
    return new Decision(
        fields[at] != 0,
        fields[at + 1],
        fields[at + 2],
        retryUs < 0 ? NEVER : Duration.of(retryUs, ChronoUnit.MICROS),
        Duration.of(fields[at + 4], ChronoUnit.MICROS),
        Source.of(fields[at + 5]),
        (int) fields[at + 6],
        Double.longBitsToDouble(fields[at + 7]));
  }

  static Decision of(long[] fields) {
    return of(fields, 0);
  }
}
