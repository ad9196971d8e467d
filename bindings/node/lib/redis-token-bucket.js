'use strict';
// A drop-in for the ioredis Lua token bucket:
//   const RedisTokenBucket = require('@rl/node/redis-token-bucket');
//   const limiter = new RedisTokenBucket(redisOptionsOrUrl, key, capacity, refillRate, { failOpen });
//   await limiter.allowRequest(tokens)            -> boolean
//   await limiter.getTimeUntilNextToken(tokens)   -> milliseconds
//   await limiter.isHealthy()                     -> boolean
// Same semantics (capacity tokens, refilled continuously at refillRate per
// second, fail-open on Redis outages by default), decided by rl's
// token_bucket. failOpen is rl's on_failure=open (docs/failure.md): rl's
// core decides what an outage gives, behind its circuit breaker. Buckets with the same connection and shape share one rl
// store and limiter, so making one per request (as the seed's users do) is cheap.
const { open } = require('./store');

const LIMITER_NAME = 'token-bucket';
// Stores by URL, limiters by URL and shape: promises, so concurrent first
// calls share one open. A failed open is forgotten, to be tried again.
const stores = new Map();
const limiters = new Map();

// 'redis://...' as is; an ioredis options object ({ host, port, username,
// password, db }) or an ioredis client (its .options) becomes a redis:// URL.
function toUrl(redisOptionsOrUrl) {
  if (typeof redisOptionsOrUrl === 'string') return redisOptionsOrUrl;
  if (redisOptionsOrUrl === null || typeof redisOptionsOrUrl !== 'object') {
    throw new TypeError('redisOptionsOrUrl: must be a URL string, ioredis options or an ioredis client');
  }
  const options = redisOptionsOrUrl.options ?? redisOptionsOrUrl;
  const { host = '127.0.0.1', port = 6379, username, password, db } = options;
  const user = username ? encodeURIComponent(username) : '';
  const auth = password ? `${user}:${encodeURIComponent(password)}@` : '';
  return `redis://${auth}${host}:${port}${db ? `/${db}` : ''}`;
}

// refillRate tokens per second as rl's integer '<count>/<window>': 2.5 -> '25/10s'.
function toLimit(refillRate) {
  let scale = 1;
  while (!Number.isInteger(refillRate * scale) && scale < 1e6) scale *= 10;
  return `${Math.round(refillRate * scale)}/${scale}s`;
}

function memoized(cache, id, make) {
  let promise = cache.get(id);
  if (!promise) {
    promise = make();
    cache.set(id, promise);
    promise.catch(() => cache.delete(id));
  }
  return promise;
}

const storeFor = (url) => memoized(stores, url, () => open(url));

function limiterFor(url, capacity, refillRate, onFailure) {
  const limit = toLimit(refillRate);
  return memoized(limiters, `${url} ${capacity} ${limit} ${onFailure}`, async () => {
    const store = await storeFor(url);
    return store.limiter({ algorithm: 'token_bucket', limit, burst: capacity, name: LIMITER_NAME, onFailure });
  });
}

class RedisTokenBucket {
  #url;
  #onFailure;

  constructor(redisOptionsOrUrl, key, capacity, refillRate, { failOpen = true, ...rest } = {}) {
    if (typeof key !== 'string' || key === '') throw new TypeError('key: must be a non-empty string');
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new TypeError('capacity: must be a positive integer');
    if (typeof refillRate !== 'number' || !(refillRate > 0) || !Number.isFinite(refillRate)) {
      throw new TypeError('refillRate: must be a positive number of tokens per second');
    }
    if (typeof failOpen !== 'boolean') throw new TypeError('failOpen: must be a boolean');
    if ('onError' in rest) {
      throw new TypeError('onError: outages are counted by rl now: see bucket.stats() (failures by status)');
    }
    this.#url = toUrl(redisOptionsOrUrl);
    this.key = key;
    this.capacity = capacity;
    this.refillRate = refillRate;
    this.#onFailure = failOpen ? 'open' : 'closed';
  }

  #limiter() {
    return limiterFor(this.#url, this.capacity, this.refillRate, this.#onFailure);
  }

  /** Takes `tokens` from the bucket: true when they were there (or the store is out and failOpen). */
  async allowRequest(tokens = 1) {
    return (await (await this.#limiter()).acquire(this.key, tokens)).allowed;
  }

  /** Milliseconds until `tokens` can be taken (0: now; Infinity: never, more than the capacity). */
  async getTimeUntilNextToken(tokens = 1) {
    const { allowed, retryAfterMs } = await (await this.#limiter()).peek(this.key, tokens);
    if (allowed) return 0;
    return retryAfterMs < 0 ? Infinity : Math.ceil(retryAfterMs);
  }

  /** True while the store's circuit breaker is closed: it opens after breaker_failures outages in a row. */
  async isHealthy() {
    return (await storeFor(this.#url)).isHealthy();
  }

  /** The statistics of the bucket's store (store.stats()): decisions by source, failures by status. */
  async stats() {
    return (await storeFor(this.#url)).stats();
  }

  /** Closes every store the buckets opened (at shutdown; they never hold the process open anyway). */
  static closeAll() {
    for (const promise of stores.values()) promise.then((store) => store.close(), () => {});
    stores.clear();
    limiters.clear();
  }
}

module.exports = RedisTokenBucket;
module.exports.RedisTokenBucket = RedisTokenBucket;
