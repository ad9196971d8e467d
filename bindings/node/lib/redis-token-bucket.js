'use strict';
// A drop-in for the ioredis Lua token bucket:
//   const RedisTokenBucket = require('@rl/node/redis-token-bucket');
//   const limiter = new RedisTokenBucket(redisOptionsOrUrl, key, capacity, refillRate, { failOpen });
//   await limiter.allowRequest(tokens)            -> boolean
//   await limiter.getTimeUntilNextToken(tokens)   -> milliseconds
//   await limiter.isHealthy()                     -> boolean
// Same semantics (capacity tokens, refilled continuously at refillRate per
// second, fail-open on Redis errors by default), decided by rl's
// token_bucket. Buckets with the same connection and shape share one rl
// store and limiter, so making one per request (as the seed's users do) is cheap.
const { open } = require('./store');
const { RlError } = require('./errors');

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

function limiterFor(url, capacity, refillRate) {
  const limit = toLimit(refillRate);
  return memoized(limiters, `${url} ${capacity} ${limit}`, async () => {
    const store = await memoized(stores, url, () => open(url));
    return store.limiter({ algorithm: 'token_bucket', limit, burst: capacity, name: LIMITER_NAME });
  });
}

// Failures of the backend, not of the caller: these fail open.
const isOutage = (err) => err instanceof RlError && err.code !== 'RL_E_INVALID_ARG';

class RedisTokenBucket {
  #url;
  #failOpen;
  #onError;

  constructor(redisOptionsOrUrl, key, capacity, refillRate, { failOpen = true, onError } = {}) {
    if (typeof key !== 'string' || key === '') throw new TypeError('key: must be a non-empty string');
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new TypeError('capacity: must be a positive integer');
    if (typeof refillRate !== 'number' || !(refillRate > 0) || !Number.isFinite(refillRate)) {
      throw new TypeError('refillRate: must be a positive number of tokens per second');
    }
    if (onError !== undefined && typeof onError !== 'function') throw new TypeError('onError: must be a function');
    this.#url = toUrl(redisOptionsOrUrl);
    this.key = key;
    this.capacity = capacity;
    this.refillRate = refillRate;
    this.#failOpen = failOpen;
    this.#onError = onError;
  }

  // Runs op on the limiter; on an outage with failOpen, reports it and
  // returns fallback instead.
  async #decide(op, fallback) {
    try {
      return await op(await limiterFor(this.#url, this.capacity, this.refillRate));
    } catch (err) {
      if (!this.#failOpen || !isOutage(err)) throw err;
      this.#onError?.(err);
      return fallback;
    }
  }

  /** Takes `tokens` from the bucket: true when they were there. */
  allowRequest(tokens = 1) {
    return this.#decide(async (limiter) => (await limiter.acquire(this.key, tokens)).allowed, true);
  }

  /** Milliseconds until `tokens` can be taken (0: now; Infinity: never, more than the capacity). */
  getTimeUntilNextToken(tokens = 1) {
    return this.#decide(async (limiter) => {
      const { allowed, retryAfterMs } = await limiter.peek(this.key, tokens);
      if (allowed) return 0;
      return retryAfterMs < 0 ? Infinity : Math.ceil(retryAfterMs);
    }, 0);
  }

  /** True when the store answers. */
  async isHealthy() {
    try {
      const limiter = await limiterFor(this.#url, this.capacity, this.refillRate);
      await limiter.peek(this.key, 0);
      return true;
    } catch (err) {
      if (!isOutage(err)) throw err;
      return false;
    }
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
