package dev.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The whole YAML conformance suite, on memory:// and on the Redis of RL_TEST_REDIS_URL, through
 * the blocking calls and (on Redis: rl's I/O thread and the JNI callback) the async ones.
 */
class ConformanceTest {
  static List<ConformanceRunner.Case> allCases() throws IOException {
    List<Path> files;
    try (Stream<Path> listing = Files.list(ConformanceRunner.directory())) {
      files = listing.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    assertFalse(files.isEmpty(), "no conformance files in " + ConformanceRunner.directory());
    List<ConformanceRunner.Case> cases = new ArrayList<>();
    for (Path file : files) cases.addAll(ConformanceRunner.load(file));
    return cases;
  }

  private static Stream<DynamicTest> on(String base, ConformanceRunner.Mode mode)
      throws IOException {
    return allCases().stream()
        .map(
            c ->
                DynamicTest.dynamicTest(
                    c.file() + ": " + c.name(),
                    () ->
                        assertEquals(
                            "", ConformanceRunner.run(c, ConformanceRunner.caseUrl(base), mode))));
  }

  /**
   * conformance/schema/unknown_fields.yaml: each case is refused before it runs, naming the field
   * the schema does not know.
   */
  @TestFactory
  Stream<DynamicTest> unknownFieldsAreRefused() throws IOException {
    Path refused = ConformanceRunner.schemaDirectory().resolve("unknown_fields.yaml");
    return ConformanceRunner.load(refused).stream()
        .map(
            c ->
                DynamicTest.dynamicTest(
                    c.file() + ": " + c.name(),
                    () -> {
                      String failure = "";
                      try {
                        ConformanceRunner.run(
                            c, ConformanceRunner.caseUrl("memory://"), ConformanceRunner.Mode.SYNC);
                      } catch (ConformanceRunner.BadCase e) {
                        failure = e.getMessage();
                      }
                      assertTrue(
                          failure.contains("unknown field 'bogus_"),
                          c.file() + ": " + c.name() + ": " + failure);
                    }));
  }

  @TestFactory
  Stream<DynamicTest> memory() throws IOException {
    return on("memory://", ConformanceRunner.Mode.SYNC);
  }

  @TestFactory
  Stream<DynamicTest> memoryAsync() throws IOException {
    return on("memory://", ConformanceRunner.Mode.ASYNC);
  }

  @TestFactory
  Stream<DynamicTest> redis() throws IOException {
    return on(TestRedis.url(), ConformanceRunner.Mode.SYNC);
  }

  @TestFactory
  Stream<DynamicTest> redisAsync() throws IOException {
    return on(TestRedis.url(), ConformanceRunner.Mode.ASYNC);
  }
}
