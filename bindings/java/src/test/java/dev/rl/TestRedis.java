package dev.rl;

import static org.junit.jupiter.api.Assertions.fail;

/** The redis-server that scripts/with-redis started (bindings/java/run-tests runs under it). */
final class TestRedis {
  private TestRedis() {}

  static String url() {
    String url = System.getenv("RL_TEST_REDIS_URL");
    if (url == null || url.isEmpty()) {
      fail("RL_TEST_REDIS_URL is not set: run the tests with bindings/java/run-tests");
    }
    return url;
  }

  /** The Redis URL with a key prefix of its own (and extra settings, "a=b&c=d"). */
  static String fresh(String settings) {
    String url = url();
    String prefix = "jt" + ProcessHandle.current().pid() + "x" + System.nanoTime();
    return url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix
        + (settings.isEmpty() ? "" : "&" + settings);
  }
}
