package dev.rl;

/**
 * rl's status codes (rl.h's rl_status), in their pinned order: {@code ordinal()} is the C value and
 * {@link #cName()} is rl_status_name's text (a test checks both against the library).
 */
public enum Status {
  OK,
  /** An argument or setting was wrong; the message names it. */
  INVALID_ARG,
  /** The operation did not complete within its deadline. */
  TIMEOUT,
  /** The backend (Redis) could not be reached. */
  BACKEND_UNAVAILABLE,
  /** The backend answered with an error it should not have. */
  BACKEND_ERROR,
  /** The store was closed. */
  SHUTDOWN,
  /** Memory could not be allocated. */
  NO_MEMORY,
  /** A bug in rl: please report it with the message. */
  INTERNAL,
  /** The backend refused the credentials. */
  AUTH,
  /** A valid request this build or store does not support. */
  UNSUPPORTED;

  private static final Status[] VALUES = values();

  /** The C name: "RL_OK", "RL_E_INVALID_ARG", ... */
  public String cName() {
    return this == OK ? "RL_OK" : "RL_E_" + name();
  }

  /** The status of a C value; INTERNAL for a value rl does not define. */
  public static Status of(int code) {
    return code >= 0 && code < VALUES.length ? VALUES[code] : INTERNAL;
  }

  /** True for the outages that on_failure and the breaker act on. */
  public boolean isOutage() {
    return Native.statusIsOutage(ordinal()); // librl's rule, not a copy
  }

  /** librl's one-line description of the status (rl_status_description). */
  public String description() {
    return Native.statusDescription(ordinal());
  }
}
