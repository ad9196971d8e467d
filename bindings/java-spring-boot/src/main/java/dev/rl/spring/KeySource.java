package dev.rl.spring;

/**
 * Where a limiter's key comes from (rl.limiters.&lt;name&gt;.key): the client's address, a header
 * (the address when it is missing or empty) or the principal (the address when there is none).
 * The servlet and WebFlux filters read it from their own request types.
 */
record KeySource(Kind kind, String header) {
  enum Kind {
    IP,
    HEADER,
    PRINCIPAL
  }

  /** The principal's key: prefixed so that a user name never counts against an address. */
  static String principalKey(String name) {
    return "principal:" + name;
  }

  /** ip (the default), header:Name or principal; else an error naming rl.limiters.x.key. */
  static KeySource parse(String spec, String where) {
    if (spec == null || spec.equals("ip")) return new KeySource(Kind.IP, null);
    if (spec.equals("principal")) return new KeySource(Kind.PRINCIPAL, null);
    if (spec.startsWith("header:") && spec.length() > "header:".length()) {
      return new KeySource(Kind.HEADER, spec.substring("header:".length()));
    }
    throw new IllegalArgumentException(
        where + ".key: '" + spec + "' is not ip, header:<Name> or principal");
  }
}
