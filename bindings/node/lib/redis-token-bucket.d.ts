// The drop-in for the ioredis token bucket.
import type { StoreStats } from './index';

export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
}

export interface RedisTokenBucketOptions {
  /** Allow requests (and report 0 ms) during a store outage: rl's onFailure 'open' (else 'closed'). Default true. */
  failOpen?: boolean;
}

declare class RedisTokenBucket {
  /** redisOptionsOrUrl: a redis:// URL, ioredis options, or an ioredis client (its .options are used). */
  constructor(
    redisOptionsOrUrl: string | RedisConnectionOptions | { options: RedisConnectionOptions },
    key: string,
    capacity: number,
    refillRate: number,
    options?: RedisTokenBucketOptions,
  );
  readonly key: string;
  readonly capacity: number;
  readonly refillRate: number;
  /** Takes `tokens` (default 1): true when they were there. */
  allowRequest(tokens?: number): Promise<boolean>;
  /** Milliseconds until `tokens` can be taken: 0 now, Infinity never. */
  getTimeUntilNextToken(tokens?: number): Promise<number>;
  /** True while the store's circuit breaker is closed. */
  isHealthy(): Promise<boolean>;
  /** The statistics of the bucket's store. */
  stats(): Promise<StoreStats>;
  /** Closes every store the buckets opened. */
  static closeAll(): void;
}

export default RedisTokenBucket;
export { RedisTokenBucket };
