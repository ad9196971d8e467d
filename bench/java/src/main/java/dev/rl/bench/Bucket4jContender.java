package dev.rl.bench;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bucket4j on Redis through Lettuce (its compare-and-set proxy manager over one shared
 * connection): a token bucket per key, tryConsume(1) per call. Bucket proxies are made once per
 * key and reused.
 */
final class Bucket4jContender implements Contender {
  private final RedisClient client;
  private final StatefulRedisConnection<String, byte[]> connection;
  private final LettuceBasedProxyManager<String> buckets;
  private final BucketConfiguration configuration;
  private final ConcurrentHashMap<String, BucketProxy> proxies = new ConcurrentHashMap<>();
  private final String prefix = "bench-bucket4j-" + System.nanoTime() + ":";

  Bucket4jContender(String redisUrl, long perSecond) {
    this.client = RedisClient.create(redisUrl);
    this.connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    this.buckets =
        Bucket4jLettuce.casBasedBuilder(connection)
            .expirationAfterWrite(
                ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                    Duration.ofSeconds(10)))
            .build();
    this.configuration =
        BucketConfiguration.builder()
            .addLimit(limit -> limit.capacity(perSecond).refillGreedy(perSecond, Duration.ofSeconds(1)))
            .build();
  }

  @Override
  public String name() {
    return "bucket4j";
  }

  @Override
  public boolean decide(String key) {
    return proxies
        .computeIfAbsent(key, k -> buckets.builder().build(prefix + k, () -> configuration))
        .tryConsume(1);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
