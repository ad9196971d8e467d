'use strict';
// limiter.acquireBatchSettled: a result per request in Promise.allSettled's
// shape, on every store; on a store that is down (every request rejected
// alike, or decided by onFailure) and on the test Redis, where a key of the
// wrong type fails its request alone.
const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const rl = require('..');
const { storeConfigs, redisUrl, noRedis, uniqueName, withQuery } = require('./support/stores');

const DEAD_URL = 'redis://127.0.0.1:1?clock=manual';

for (const config of storeConfigs) {
  const openManual = () => rl.open(withQuery(config.url, 'clock=manual'), {}, { inline: config.inline });

  test(`acquireBatchSettled decides like Promise.allSettled of acquires on ${config.label}`, async (t) => {
    const batchStore = await openManual();
    const oneByOne = await openManual();
    t.after(() => {
      batchStore.close();
      oneByOne.close();
    });
    const requests = [{ key: 'a' }, { key: 'a' }, { key: 'a' }, { key: 'b', cost: 2 }];
    const settings = { limit: '2/1h' };
    const settled = await batchStore.limiter({ ...settings, name: uniqueName('settled') }).acquireBatchSettled(requests);
    const single = oneByOne.limiter({ ...settings, name: uniqueName('single') });
    const expected = [];
    for (const r of requests) expected.push((await Promise.allSettled([single.acquire(r.key, r.cost)]))[0]);
    assert.deepStrictEqual(settled, expected);
    // A denial is a decision, not a rejection.
    assert.deepEqual(settled.map((s) => [s.status, s.value.allowed]), [
      ['fulfilled', true], ['fulfilled', true], ['fulfilled', false], ['fulfilled', true],
    ]);
  });

  test(`acquireBatchSettled rejects a malformed batch as a whole on ${config.label}`, async () => {
    const store = await openManual();
    const limiter = store.limiter({ limit: '10/1h', name: uniqueName('bad') });
    const invalid = (pattern) => (err) => err instanceof rl.RlError && err.code === 'RL_E_INVALID_ARG' && pattern.test(err.message);
    await assert.rejects(limiter.acquireBatchSettled([]), invalid(/count/));
    await assert.rejects(limiter.acquireBatchSettled([{ key: 'k' }, { key: '' }]), invalid(/requests\[1\]\.key/));
    await assert.rejects(limiter.acquireBatchSettled([{ key: 'k' }, { key: 'k', cost: 0 }]), invalid(/requests\[1\]\.cost/));
    await assert.rejects(limiter.acquireBatchSettled('k'), TypeError);
    assert.equal((await limiter.peek('k', 0)).remaining, 10); // nothing was decided
    store.close();
    await assert.rejects(limiter.acquireBatchSettled([{ key: 'k' }]), (err) => err.code === 'RL_E_SHUTDOWN');
  });
}

test('acquireBatchSettled on a store that is down: every request rejected with the outage', async (t) => {
  const store = await rl.open(DEAD_URL);
  t.after(() => store.close());
  const settled = await store.limiter({ limit: '5/s' }).acquireBatchSettled([{ key: 'a' }, { key: 'b' }]);
  assert.equal(settled.length, 2);
  for (const s of settled) {
    assert.equal(s.status, 'rejected');
    assert.ok(s.reason instanceof rl.RlError);
    assert.equal(s.reason.code, 'RL_E_BACKEND_UNAVAILABLE');
    assert.notEqual(s.reason.message, '');
  }
});

test('acquireBatchSettled with onFailure open: every request decided by fail_open', async (t) => {
  const store = await rl.open(DEAD_URL);
  t.after(() => store.close());
  const settled = await store.limiter({ limit: '5/s', onFailure: 'open' }).acquireBatchSettled([{ key: 'a' }, { key: 'b' }]);
  assert.deepEqual(settled.map((s) => [s.status, s.value.allowed, s.value.source]), [
    ['fulfilled', true, 'fail_open'], ['fulfilled', true, 'fail_open'],
  ]);
});

const redisCli = (...args) =>
  execFileSync('redis-cli', ['-u', redisUrl, '--no-auth-warning', ...args], { encoding: 'utf8' }).trim();

test('acquireBatchSettled on Redis: a key of the wrong type fails its request alone', { skip: noRedis }, async (t) => {
  const prefix = uniqueName('settled');
  const store = await rl.open(withQuery(redisUrl, `prefix=${prefix}`));
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '5/s', name: 'each' });
  await limiter.acquire('broken');
  // Its Redis key becomes a set, a type no script reads.
  const keys = redisCli('--scan', '--pattern', `${prefix}:*`).split('\n');
  assert.equal(keys.length, 1);
  redisCli('DEL', keys[0]);
  redisCli('SADD', keys[0], 'x');
  const settled = await limiter.acquireBatchSettled([{ key: 'a' }, { key: 'broken' }, { key: 'b', cost: 2 }]);
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal(settled[0].value.remaining, 4);
  assert.equal(settled[2].value.remaining, 3);
  assert.equal(settled[1].reason.code, 'RL_E_BACKEND_ERROR');
  assert.match(settled[1].reason.message, /WRONGTYPE/);
});
