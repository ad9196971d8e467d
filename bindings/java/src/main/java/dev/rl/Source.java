package dev.rl;

/** Which path produced a decision (rl.h's rl_source). */
public enum Source {
  /** The store itself decided. */
  STORE,
  /** The store had an outage; on_failure=open allowed it. */
  FAIL_OPEN,
  /** The store had an outage; the local fallback decided. */
  LOCAL,
  /** A denial the limiter remembered (setting deny_cache_keys); no store call. */
  DENY_CACHE;

  static Source of(long code) {
    return code >= 0 && code < values().length ? values()[(int) code] : STORE;
  }
}
