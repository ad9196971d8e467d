package dev.rl;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

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

  /**
   * Pauses the server (CLIENT PAUSE ms ALL): every client's commands wait unanswered, as on a
   * stalled Redis, until the pause ends by itself. Call {@link #awaitPauseEnd} after (in a
   * finally), so that later tests see a live server.
   */
  static void pause(int ms) throws IOException {
    assertTrue(command("CLIENT", "PAUSE", Integer.toString(ms), "ALL").startsWith("+OK"));
  }

  /** Returns when a pause has ended: a PING is answered only then (CLIENT UNPAUSE waits too). */
  static void awaitPauseEnd() throws IOException {
    assertTrue(command("PING").startsWith("+PONG"));
  }

  /** One command on a connection of its own; returns the first line of the reply. */
  private static String command(String... args) throws IOException {
    URI uri = URI.create(url());
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      StringBuilder resp = new StringBuilder("*" + args.length + "\r\n");
      for (String arg : args) resp.append('$').append(arg.length()).append("\r\n").append(arg).append("\r\n");
      OutputStream out = socket.getOutputStream();
      out.write(resp.toString().getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder line = new StringBuilder();
      for (int c; (c = in.read()) != -1 && c != '\n'; ) line.append((char) c);
      return line.toString().trim();
    }
  }
}
