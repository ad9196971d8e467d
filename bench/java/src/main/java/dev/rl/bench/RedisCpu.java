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

  /**
   * Microseconds the server has spent in commands (INFO commandstats), but for the INFO and CONFIG
   * of this connection: the measure bench/run's other benches take.
   */
  long commandMicros() {
    long usec = 0;
    for (String line : connection.sync().info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")
          || line.startsWith("cmdstat_info:")
          || line.startsWith("cmdstat_config")) {
        continue;
      }
      int at = line.indexOf("usec=");
      if (at >= 0) usec += Long.parseLong(line.substring(at + 5, line.indexOf(',', at)));
    }
    return usec;
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
