package dev.rl.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * The redis-server's own CPU time (INFO cpu: used_cpu_user + used_cpu_sys) and its commands' time
 * (INFO commandstats), on a connection of its own.
 */
final class RedisCpu implements AutoCloseable {
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;

  RedisCpu(String redisUrl) {
    client = RedisClient.create(redisUrl);
    connection = client.connect();
  }

  /** Microseconds of CPU the server has used since it started. */
  long micros() {
    double seconds = 0;
    for (String line : connection.sync().info("cpu").split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return (long) (seconds * 1e6);
  }

  private static final java.util.Set<String> RUNS_OTHERS =
      java.util.Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "exec");

  /** Sent by a client, not run by a script or a transaction. */
  private static boolean entryCommand(String c) {
    return RUNS_OTHERS.contains(c)
        || c.equals("multi")
        || c.startsWith("script|")
        || c.startsWith("function|")
        || c.contains(".");
  }

  /**
   * Microseconds the server has spent in commands (INFO commandstats), but for the INFO and CONFIG
   * of this connection; when scripts or transactions ran, only the commands clients sent (their
   * time includes the commands they ran, which commandstats lists too): the measure bench/run's
   * other benches take. Bucket4j's GET before its script is then left out.
   */
  long commandMicros() {
    java.util.Map<String, Long> usec = new java.util.HashMap<>();
    boolean nested = false;
    for (String line : connection.sync().info("commandstats").split("\\r?\\n")) {
      int colon = line.indexOf(':');
      if (!line.startsWith("cmdstat_") || colon < 0) continue;
      String command = line.substring(8, colon);
      if (command.equals("info") || command.equals("config")) continue;
      nested |= RUNS_OTHERS.contains(command);
      int at = line.indexOf("usec=");
      if (at >= 0) usec.put(command, Long.parseLong(line.substring(at + 5, line.indexOf(',', at))));
    }
    long total = 0;
    for (java.util.Map.Entry<String, Long> e : usec.entrySet()) {
      if (!nested || entryCommand(e.getKey())) total += e.getValue();
    }
    return total;
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
