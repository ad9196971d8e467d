package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A store's credentials never show: every URL shape of tests/data/url_shapes.yaml (the table every
 * binding's tests share) on every surface: {@link Store#url()}, toString of the store, its limiter
 * and a SlidingWindowRateLimiter, the metrics, and the exceptions of a failed call and of a
 * refused open (message, toString, stack trace).
 */
class CredentialsTest {
  record Shape(
      String name, String url, String display, List<String> secrets, String refused, boolean opens) {}

  @SuppressWarnings("unchecked")
  static List<Shape> shapes() throws IOException {
    Path file = Path.of(System.getProperty("rl.root", "../.."), "tests", "data", "url_shapes.yaml");
    Map<String, Object> doc =
        new Yaml(new SafeConstructor(new LoaderOptions()))
            .load(Files.readString(file, StandardCharsets.UTF_8));
    List<Shape> shapes =
        ((List<Map<String, Object>>) doc.get("shapes"))
            .stream()
                .map(
                    s ->
                        new Shape(
                            (String) s.get("name"),
                            (String) s.get("url"),
                            (String) s.get("display"),
                            (List<String>) s.get("secrets"),
                            (String) s.get("refused"),
                            !Boolean.FALSE.equals(s.get("opens"))))
                .toList();
    assertTrue(shapes.size() >= 12, shapes.size() + " shapes in " + file);
    return shapes;
  }

  /** Every common way of printing value, as one string to search. */
  static String shown(Object value) {
    StringBuilder text = new StringBuilder(String.valueOf(value));
    if (value instanceof Throwable t) {
      StringWriter trace = new StringWriter();
      t.printStackTrace(new PrintWriter(trace));
      text.append('\n').append(t.getMessage()).append('\n').append(trace);
    }
    return text.toString();
  }

  static void noSecret(Shape shape, String text, String surface) {
    for (String secret : shape.secrets()) {
      assertFalse(
          text.contains(secret), shape.name() + ": " + surface + " shows '" + secret + "': " + text);
    }
  }

  static void refusedOpen(Shape shape, String url) {
    RateLimitException e = assertThrows(RateLimitException.class, () -> Store.open(url));
    assertEquals(Status.INVALID_ARG, e.status(), e.getMessage());
    noSecret(shape, shown(e), "the refused open");
  }

  @TestFactory
  Stream<DynamicTest> everySurfaceShowsOnlyLibrlsDisplayForm() throws IOException {
    return shapes().stream()
        .map(shape -> DynamicTest.dynamicTest(shape.name(), () -> check(shape)));
  }

  static void check(Shape shape) {
    if (!shape.opens()) {
      refusedOpen(shape, shape.url());
      return;
    }
    Store store = Store.open(shape.url());
    try (store;
        RateLimiter limiter = store.limiter(Map.of("limit", "5/s", "name", "credentials"))) {
      assertEquals(shape.display(), store.url());
      assertEquals("Store(" + shape.display() + ")", store.toString());
      Object outcome;
      try { // on closed ports a call fails as an outage; memory:// decides
        outcome = limiter.tryAcquire("k", 1);
      } catch (RateLimitException e) {
        outcome = e;
      }
      noSecret(shape, shown(outcome), "a call");
      noSecret(shape, shown(store) + shown(limiter), "the store or limiter");
      noSecret(shape, store.metrics(), "the metrics");
    }
    assertEquals(shape.display(), store.url());
    noSecret(shape, shown(store), "the closed store");
    try (SlidingWindowRateLimiter dropIn = new SlidingWindowRateLimiter(shape.url(), 1000, 5)) {
      noSecret(shape, shown(dropIn), "the SlidingWindowRateLimiter");
    }
    refusedOpen(shape, shape.refused());
  }
}
