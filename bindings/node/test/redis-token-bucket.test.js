'use strict';
// The drop-in for the ioredis token bucket: same constructor shape and
// methods, ioredis options or client or URL, fail-open on outages.
const test = require('node:test');
const assert = require('node:assert');
const Redis = require('ioredis');
const RedisTokenBucket = require('../lib/redis-token-bucket');
const { redisUrl, noRedis, uniqueName } = require('./support/stores');

// An address where nothing listens: every call is an outage. Two outages
// open the breaker, and the manual clock keeps it open.
const DEAD_URL = 'redis://127.0.0.1:1?clock=manual&breaker_failures=2';

async function checkBucket(connection) {
  const key = uniqueName('bucket');
  // 3 tokens, one refilled every 1000 s: nothing refills during the test.
  const bucket = new RedisTokenBucket(connection, key, 3, 0.001);
  assert.equal(await bucket.isHealthy(), true);
  assert.equal(await bucket.getTimeUntilNextToken(), 0);
  assert.deepEqual([await bucket.allowRequest(), await bucket.allowRequest(2), await bucket.allowRequest()], [true, true, false]);
  const wait = await bucket.getTimeUntilNextToken();
  assert.ok(wait > 990000 && wait <= 1000000, `waits ${wait} ms`);
  assert.equal(await bucket.getTimeUntilNextToken(4), Infinity);
  // Another instance on the same key shares the bucket (as with the seed).
  assert.equal(await new RedisTokenBucket(connection, key, 3, 0.001).allowRequest(), false);
}

test('a bucket on memory://', () => checkBucket('memory://'));

test('a bucket on Redis, by URL, ioredis options and ioredis client', { skip: noRedis }, async () => {
  await checkBucket(redisUrl);
  const { hostname, port } = new URL(redisUrl);
  await checkBucket({ host: hostname, port: Number(port) });
  const client = new Redis(redisUrl, { lazyConnect: true });
  await checkBucket(client);
  client.disconnect();
});

test("fails open on an outage by default (rl's onFailure open), and counts it", async () => {
  const bucket = new RedisTokenBucket(DEAD_URL, 'k', 1, 1);
  assert.equal(await bucket.isHealthy(), true, 'healthy until the breaker opens');
  assert.equal(await bucket.allowRequest(), true);
  assert.equal(await bucket.allowRequest(), true);
  assert.equal(await bucket.getTimeUntilNextToken(), 0);
  assert.equal(await bucket.isHealthy(), false);
  const stats = await bucket.stats();
  assert.equal(stats.decisions.fail_open.allowed, 3);
  assert.equal(stats.breaker, 'open');
});

test('onError is gone: the failures are in stats()', () => {
  assert.throws(() => new RedisTokenBucket(DEAD_URL, 'k', 1, 1, { onError: () => {} }), { name: 'TypeError', message: /stats\(\)/ });
});

test('failOpen: false rejects with the RlError', async () => {
  const bucket = new RedisTokenBucket(DEAD_URL, 'k', 1, 1, { failOpen: false });
  await assert.rejects(bucket.allowRequest(), { name: 'RlError' });
});

test('bad input is never failed open', async () => {
  const bucket = new RedisTokenBucket(DEAD_URL, 'k', 1, 1);
  await assert.rejects(bucket.allowRequest(0), { code: 'RL_E_INVALID_ARG' });
});

test.after(() => RedisTokenBucket.closeAll());
