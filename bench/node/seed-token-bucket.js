'use strict';
// The seed design, written here for comparison: an ioredis token bucket in
// one Lua script (hash of tokens + lastRefill, refilled from the client's
// clock, EXPIRE on every call), run with EVALSHA through defineCommand, and
// failing open on Redis errors. It is the code rl's RedisTokenBucket replaces.

const SCRIPT = `
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local refillRate = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local state = redis.call('HMGET', key, 'tokens', 'lastRefill')
local tokens = tonumber(state[1]) or capacity
local lastRefill = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - lastRefill) / 1000 * refillRate)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'lastRefill', now)
redis.call('EXPIRE', key, ttl)
local wait = 0
if allowed == 0 then wait = math.ceil((requested - tokens) / refillRate * 1000) end
return {allowed, wait}
`;

class SeedTokenBucket {
  constructor(redis, key, capacity, refillRate, ttlSeconds = 3600) {
    if (!redis.seedTokenBucket) redis.defineCommand('seedTokenBucket', { numberOfKeys: 1, lua: SCRIPT });
    Object.assign(this, { redis, key, capacity, refillRate, ttlSeconds });
  }

  async allowRequest(tokens = 1) {
    try {
      const [allowed] = await this.redis.seedTokenBucket(this.key, this.capacity, this.refillRate, tokens, Date.now(), this.ttlSeconds);
      return allowed === 1;
    } catch (err) {
      console.error('Redis error:', err);
      return true; // fail open
    }
  }
}

module.exports = { SeedTokenBucket };
