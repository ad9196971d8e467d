package dev.rl.bench;

/** One limiter under test: a blocking decision per call, safe from many threads. */
interface Contender extends AutoCloseable {
  /** Its name in the results ("rl gcra", "bucket4j", ...). */
  String name();

  /** One decision on key; true when admitted (every limit is far above the load). */
  boolean decide(String key) throws Exception;

  @Override
  void close();
}
