package dev.rl;

/** A call rl refused or could not complete; {@link #status()} says why (the same in every binding). */
public class RateLimitException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final Status status;

  public RateLimitException(Status status, String message) {
    super(status.cName() + ": " + message);
    this.status = status;
  }

  /** From rl_jni.c: the C status value. */
  RateLimitException(int status, String message) {
    this(Status.of(status), message);
  }

  public Status status() {
    return status;
  }
}
