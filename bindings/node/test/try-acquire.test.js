'use strict';
// limiter.tryAcquire: acquire without a promise, on an inline memory:// store only.
const test = require('node:test');
const assert = require('node:assert');
const rl = require('..');

test('tryAcquire decides at once, with the shape and state of acquire', async (t) => {
  const store = await rl.open('memory://?clock=manual');
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '2/1m' });
  const first = limiter.tryAcquire('k');
  assert.deepEqual(first, { allowed: true, limit: 2, remaining: 1, retryAfterMs: 0, resetAfterMs: 30000, limitIndex: 0, source: 'store', suppressionFactor: 0 });
  assert.equal(limiter.tryAcquire('k').allowed, true);
  const denied = limiter.tryAcquire(Buffer.from('k'));
  assert.equal(denied.allowed, false);
  assert.equal(denied.retryAfterMs, 30000);
  // The same state as the promise API.
  assert.equal((await limiter.acquire('k')).allowed, false);
  assert.equal(limiter.tryAcquire('other', 2n).allowed, true);
  assert.equal(limiter.tryAcquire('big', 3).retryAfterMs, -1);
});

test('tryAcquire checks its input as acquire does', async (t) => {
  const store = await rl.open('memory://');
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '2/1m' });
  assert.throws(() => limiter.tryAcquire('k', 0), { code: 'RL_E_INVALID_ARG' });
  assert.throws(() => limiter.tryAcquire(''), { code: 'RL_E_INVALID_ARG' });
  assert.throws(() => limiter.tryAcquire(42), { name: 'TypeError', message: /key/ });
  store.close();
  assert.throws(() => limiter.tryAcquire('k'), { code: 'RL_E_SHUTDOWN' });
});

test('tryAcquire refuses every store that would make it block', async (t) => {
  const unsupported = { name: 'RlError', code: 'RL_E_UNSUPPORTED', message: /tryAcquire.*block the event loop/ };
  const viaThread = await rl.open('memory://', undefined, { inline: false });
  t.after(() => viaThread.close());
  assert.throws(() => viaThread.limiter({ limit: '1/s' }).tryAcquire('k'), unsupported);
  const redis = await rl.open('redis://127.0.0.1:1');
  t.after(() => redis.close());
  assert.throws(() => redis.limiter({ limit: '1/s' }).tryAcquire('k'), unsupported);
});
