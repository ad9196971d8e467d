'use strict';
// The stores a test runs on: memory:// answered on the JS thread, memory://
// through rl's I/O thread (the async path Redis takes), and the real
// redis-server of scripts/with-redis when RL_TEST_REDIS_URL is set.
const redisUrl = process.env.RL_TEST_REDIS_URL;
// Tests that need Redis skip with this reason when it is not there.
const noRedis = !redisUrl && 'RL_TEST_REDIS_URL is not set (scripts/with-redis sets it)';

const storeConfigs = [
  { label: 'memory://', url: 'memory://', inline: true },
  { label: 'memory:// via the I/O thread', url: 'memory://', inline: false },
  ...(redisUrl ? [{ label: 'redis', url: redisUrl, inline: true }] : []),
];

// A limiter name unique to this process and call, so runs never share keys.
let names = 0;
const uniqueName = (what) => `${what}-${process.pid}-${Date.now()}-${names++}`;

// Appends query settings to a store URL.
const withQuery = (url, query) => `${url}${url.includes('?') ? '&' : '?'}${query}`;

module.exports = { redisUrl, noRedis, storeConfigs, uniqueName, withQuery };
