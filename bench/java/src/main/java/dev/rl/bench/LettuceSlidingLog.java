package dev.rl.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The sliding-window log Java services run today: a sorted set per client, ZREMRANGEBYSCORE +
 * ZCARD + ZADD (+ PEXPIRE) in one Lua script called by EVALSHA over one shared, multiplexed Lettuce
 * connection, blocking (sync API) per call, or through the async API. The member is a random
 * 64-bit hex string instead of a UUID, so that SecureRandom does not slow the peer down.
 */
final class LettuceSlidingLog implements AsyncContender {
  static final String SCRIPT =
      "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))\n"
          + "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then\n"
          + "  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])\n"
          + "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
          + "  return 1\n"
          + "end\n"
          + "return 0\n";

  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> commands;
  private final RedisAsyncCommands<String, String> async;
  private final String sha;
  private final String prefix = "bench-zset-" + System.nanoTime() + ":";
  private final String windowMs;
  private final String maxRequests;

  LettuceSlidingLog(String redisUrl, long windowMs, long maxRequests) {
    this.client = RedisClient.create(redisUrl);
    this.connection = client.connect();
    this.commands = connection.sync();
    this.async = connection.async();
    this.sha = commands.scriptLoad(SCRIPT);
    this.windowMs = Long.toString(windowMs);
    this.maxRequests = Long.toString(maxRequests);
  }

  @Override
  public String name() {
    return "lettuce sliding log";
  }

  @Override
  public boolean decide(String key) {
    Long allowed = commands.evalsha(sha, ScriptOutputType.INTEGER, keys(key), arguments());
    return allowed == 1L;
  }

  @Override
  public CompletionStage<Boolean> decideAsync(String key) {
    return async
        .<Long>evalsha(sha, ScriptOutputType.INTEGER, keys(key), arguments())
        .thenApply(allowed -> allowed == 1L);
  }

  private String[] keys(String key) {
    return new String[] {prefix + key};
  }

  /** The script's ARGV for a call now: now (ms), window (ms), limit, a fresh member. */
  private String[] arguments() {
    String now = Long.toString(System.currentTimeMillis());
    String member = Long.toHexString(ThreadLocalRandom.current().nextLong());
    return new String[] {now, windowMs, maxRequests, member};
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
