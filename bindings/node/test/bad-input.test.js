'use strict';
// Every method with bad input: a value of the wrong JS type is a TypeError
// before anything reaches librl; a value librl refuses is an RlError whose
// code is the C status and whose message names the argument. Never a crash.
const test = require('node:test');
const assert = require('node:assert');
const rl = require('..');
const native = require('../lib/native');
const { storeConfigs } = require('./support/stores');

const rlError = (code, pattern) => (err) => {
  assert.ok(err instanceof rl.RlError, `expected RlError, got ${err}`);
  assert.equal(err.code, code);
  assert.match(err.message, pattern);
  return true;
};
const typeError = (pattern) => (err) => {
  assert.ok(err instanceof TypeError, `expected TypeError, got ${err}`);
  assert.match(err.message, pattern);
  return true;
};

const WRONG_KEYS = [42, null, undefined, {}, ['k'], new Uint16Array(2), Symbol('k'), () => 'k'];
const WRONG_COSTS = ['1', 1.5, NaN, Infinity, -Infinity, null, {}, [1], true, 2 ** 53];

test('open', async () => {
  for (const url of [undefined, 42, null, new URL('memory://')]) {
    await assert.rejects(rl.open(url), typeError(/url/));
  }
  await assert.rejects(rl.open('memory://', 'clock=manual'), typeError(/settings/));
  await assert.rejects(rl.open('memory://', { clock: {} }), typeError(/clock/));
  await assert.rejects(rl.open('memory://', {}, { inline: 'yes' }), typeError(/inline/));
  await assert.rejects(rl.open('nope://x'), rlError('RL_E_INVALID_ARG', /scheme/));
  await assert.rejects(rl.open(''), rlError('RL_E_INVALID_ARG', /url/));
  await assert.rejects(rl.open('memory://?bogus=1'), rlError('RL_E_INVALID_ARG', /bogus/));
  await assert.rejects(rl.open('memory://', { clock: 'sundial' }), rlError('RL_E_INVALID_ARG', /clock/));
  await assert.rejects(rl.open('memory://', { timeoutMs: -5 }), rlError('RL_E_INVALID_ARG', /timeout_ms/));
  await assert.rejects(rl.open('memory://', { limit: '1/s' }), rlError('RL_E_INVALID_ARG', /limit/));
});

test('store.limiter', async () => {
  const store = await rl.open('memory://');
  for (const options of [undefined, null, 'gcra', 42]) {
    assert.throws(() => store.limiter(options), typeError(/options/));
  }
  assert.throws(() => store.limiter({ limit: {} }), typeError(/limit/));
  assert.throws(() => store.limiter({ limit: '1/s', burst: null }), typeError(/burst/));
  assert.throws(() => store.limiter({ limit: '1/s', burst: NaN }), typeError(/burst/));
  assert.throws(() => store.limiter({}), rlError('RL_E_INVALID_ARG', /limit/));
  for (const limit of ['', 'abc', '0/s', '-1/s', '10/0s', '10/xs', '10/', '/s', '1.5/s', '10/s,', '2000000000000/s']) {
    assert.throws(() => store.limiter({ limit }), rlError('RL_E_INVALID_ARG', /limit/), limit);
  }
  assert.throws(() => store.limiter({ limit: '1/s', algorithm: 'leaky' }), rlError('RL_E_INVALID_ARG', /algorithm/));
  assert.throws(() => store.limiter({ limit: '1/s', burst: 0 }), rlError('RL_E_INVALID_ARG', /burst/));
  assert.throws(() => store.limiter({ limit: '1/s', name: 'a{b}' }), rlError('RL_E_INVALID_ARG', /name/));
  assert.throws(() => store.limiter({ limit: '1/s', name: 'x'.repeat(65) }), rlError('RL_E_INVALID_ARG', /name/));
  assert.throws(() => store.limiter({ limit: '1/s', clock: 'manual' }), rlError('RL_E_INVALID_ARG', /clock/));
  assert.throws(() => store.limiter({ limit: '1/s', colour: 'red' }), rlError('RL_E_INVALID_ARG', /colour/));
  store.close();
});

// librl reads the URL and settings as C strings: a NUL byte in one is
// refused by name (as in Go), never cut short ('api\0evil' is not 'api').
test('a NUL byte in the url or a setting is RL_E_INVALID_ARG naming it', async () => {
  const nul = (name) => rlError('RL_E_INVALID_ARG', new RegExp(`^${name}: contains a NUL byte$`));
  await assert.rejects(rl.open('memory://\0'), nul('url'));
  await assert.rejects(rl.open('memory://?clock=manual\0x'), nul('url'));
  await assert.rejects(rl.open('memory://', { clock: 'manual\0' }), nul('clock'));
  await assert.rejects(rl.open('memory://', { ['clock\0x']: 'manual' }), nul('store settings key'));
  await assert.rejects(rl.open('\0memory://'), nul('url'));
  const store = await rl.open('memory://');
  assert.throws(() => store.limiter({ limit: '1/s', name: 'api\0evil' }), nul('name'));
  assert.throws(() => store.limiter({ limit: '1/s\0junk' }), nul('limit'));
  assert.throws(() => store.limiter({ limit: ['1/s', '5/m\0'] }), nul('limit'));
  assert.throws(() => store.limiter({ limit: '1/s', algorithm: 'gcra\0' }), nul('algorithm'));
  assert.throws(() => store.limiter({ limit: '1/s', granularity: '\0' }), nul('granularity'));
  assert.throws(() => store.limiter({ limit: '1/s', ['na\0me']: 'x' }), nul('limiter settings key'));
  const { RedisTokenBucket } = rl;
  await assert.rejects(new RedisTokenBucket('memory://\0', 'k', 1, 1).allowRequest(), nul('url'));
  RedisTokenBucket.closeAll();
  store.close();
});

test('native handles are type-tagged: a forged or swapped handle is a TypeError', async () => {
  const store = await rl.open('memory://');
  const limiter = store.limiter({ limit: '1/s' });
  const noop = () => {};
  assert.throws(() => native.limiterAcquire({}, 'k', 1), typeError(/limiter/));
  assert.throws(() => native.limiterCallAsync({}, native.ops.acquire, 'k', 1, 0, noop), typeError(/limiter/));
  assert.throws(() => native.limiterNew({}, ['limit', '1/s']), typeError(/store/));
  assert.throws(() => native.storeClose(null), typeError(/store/));
  // A store handle where a limiter handle belongs, and the reverse.
  const storeHandle = await new Promise((resolve, reject) =>
    native.storeOpen('memory://', [], (err, handle) => (err === null ? resolve(handle) : reject(err))),
  );
  assert.throws(() => native.limiterAcquire(storeHandle, 'k', 1), typeError(/limiter/));
  const limiterHandle = native.limiterNew(storeHandle, ['limit', '1/s']);
  assert.throws(() => native.storeClose(limiterHandle), typeError(/store/));
  assert.throws(() => native.limiterCallAsync(limiterHandle, 9, 'k', 1, 0, noop), typeError(/op/));
  // An async call needs its callback, checked before anything starts.
  assert.throws(() => native.limiterCallAsync(limiterHandle, native.ops.acquire, 'k', 1, 0), typeError(/callback/));
  assert.throws(() => native.waitCancel(limiterHandle), typeError(/wait/));
  native.storeClose(storeHandle);
  await limiter.acquire('k');
  store.close();
});

for (const config of storeConfigs) {
  test(`limiter methods on ${config.label}`, async () => {
    const store = await rl.open(config.url, {}, { inline: config.inline });
    const limiter = store.limiter({ limit: '10/s', name: 'badinput' });
    const calls = {
      acquire: (key, cost) => limiter.acquire(key, cost),
      peek: (key, cost) => limiter.peek(key, cost),
      refund: (key, cost) => limiter.refund(key, cost),
      acquireWait: (key, cost) => limiter.acquireWait(key, cost, { timeoutMs: 0 }),
      acquireBatch: (key, cost) => limiter.acquireBatch([{ key: 'ok' }, { key, cost }]),
    };
    for (const [method, call] of Object.entries(calls)) {
      const keyName = method === 'acquireBatch' ? /requests\[1\]\.key/ : /key/;
      const costName = method === 'acquireBatch' ? /requests\[1\]\.cost/ : /cost/;
      for (const key of WRONG_KEYS) {
        if (method === 'acquireBatch' && key === undefined) continue; // a missing key is the empty key
        await assert.rejects(call(key, 1), typeError(keyName), `${method} key ${String(key)}`);
      }
      for (const cost of WRONG_COSTS) {
        await assert.rejects(call('k', cost), typeError(costName), `${method} cost ${String(cost)}`);
      }
      await assert.rejects(call('k', 2n ** 64n), RangeError);
      await assert.rejects(call('', 1), rlError('RL_E_INVALID_ARG', keyName), `${method} empty key`);
      await assert.rejects(call('x'.repeat(513), 1), rlError('RL_E_INVALID_ARG', /513 bytes/));
      // 171 euro signs are 171 characters but 513 bytes of UTF-8.
      await assert.rejects(call('€'.repeat(171), 1), rlError('RL_E_INVALID_ARG', /513 bytes/));
      await assert.rejects(call(Buffer.alloc(513), 1), rlError('RL_E_INVALID_ARG', /513 bytes/));
      await assert.rejects(call('k', -1), rlError('RL_E_INVALID_ARG', /negative/));
      await assert.rejects(call('k', -1n), rlError('RL_E_INVALID_ARG', /negative/));
      await assert.rejects(call('k', 2 ** 41), rlError('RL_E_INVALID_ARG', /2\^40/));
      if (method !== 'peek') await assert.rejects(call('k', 0), rlError('RL_E_INVALID_ARG', costName));
    }
    // The longest key and binary keys are fine.
    assert.equal((await limiter.acquire('x'.repeat(512))).allowed, true);
    assert.equal((await limiter.acquire(Buffer.from([0, 0xff, 0x7b, 0x7d]))).allowed, true);
    assert.equal((await limiter.peek('k', 0)).allowed, true);

    for (const key of WRONG_KEYS) await assert.rejects(limiter.reset(key), typeError(/key/));
    await assert.rejects(limiter.reset(''), rlError('RL_E_INVALID_ARG', /key/));

    for (const requests of [undefined, null, 'k', { key: 'k' }]) {
      await assert.rejects(limiter.acquireBatch(requests), typeError(/requests/));
    }
    await assert.rejects(limiter.acquireBatch(['k']), typeError(/requests\[0\]/));
    await assert.rejects(limiter.acquireBatch([]), rlError('RL_E_INVALID_ARG', /count/));

    for (const timeoutMs of ['1', null, NaN]) {
      await assert.rejects(limiter.acquireWait('k', 1, { timeoutMs }), typeError(/timeoutMs/));
    }
    await assert.rejects(limiter.acquireWait('k', 1, { timeoutMs: -1 }), rlError('RL_E_INVALID_ARG', /timeoutMs/));
    await assert.rejects(limiter.acquireWait('k', 1, { signal: {} }), typeError(/signal/));
    const reason = new Error('stop');
    await assert.rejects(limiter.acquireWait('k', 1, { signal: AbortSignal.abort(reason) }), (err) => err === reason);

    store.close();
    for (const call of [() => limiter.acquire('k'), () => limiter.peek('k'), () => limiter.refund('k'),
      () => limiter.reset('k'), () => limiter.acquireBatch([{ key: 'k' }]), () => limiter.acquireWait('k')]) {
      await assert.rejects(call(), rlError('RL_E_SHUTDOWN', /closed/));
    }
    // Type errors still come first on a closed store.
    await assert.rejects(limiter.acquire(42), TypeError);
  });
}

// Keys are (bytes, length): a NUL byte is part of the key, never its end.
for (const config of storeConfigs) {
  test(`keys holding NUL bytes are whole keys on ${config.label}`, async () => {
    const store = await rl.open(config.url, {}, { inline: config.inline });
    const limiter = store.limiter({ limit: '1/1h', name: `nul-keys-${process.pid}-${Date.now()}` });
    const keys = ['a\0b', 'a', 'a\0c', '\0', '\0\0', Buffer.from('b\0b'), 'b', `${'x'.repeat(300)}\0y`, 'x'.repeat(300)];
    for (const key of keys) assert.equal((await limiter.acquire(key)).allowed, true, JSON.stringify(String(key)));
    // Each was its own key: every one is now spent, and a string and the
    // Buffer of its UTF-8 bytes are the same key.
    for (const key of keys) assert.equal((await limiter.peek(key)).allowed, false, JSON.stringify(String(key)));
    assert.equal((await limiter.peek(Buffer.from('a\0b'))).allowed, false);
    const batch = await limiter.acquireBatch([{ key: 'c\0d' }, { key: 'c' }, { key: 'c\0d' }]);
    assert.deepEqual(batch.map((d) => d.allowed), [true, true, false]);
    await limiter.reset('a\0b');
    assert.equal((await limiter.peek('a\0b')).allowed, true);
    assert.equal((await limiter.peek('a')).allowed, false);
    store.close();
  });
}

test('the manual clock', async () => {
  const manual = await rl.open('memory://?clock=manual');
  assert.throws(() => manual.clock.advance(-1), rlError('RL_E_INVALID_ARG', /./));
  assert.throws(() => manual.clock.advance(1.5), typeError(/us/));
  assert.throws(() => manual.clock.set('0'), typeError(/us/));
  manual.clock.set(10);
  assert.throws(() => manual.clock.set(5), rlError('RL_E_INVALID_ARG', /./));
  manual.close();
  const monotonic = await rl.open('memory://');
  assert.equal(monotonic.manualClock, false);
  assert.throws(() => monotonic.clock.advance(1), rlError('RL_E_INVALID_ARG', /clock=manual/));
  monotonic.close();
});

test('middleware and RedisTokenBucket options', async () => {
  const store = await rl.open('memory://');
  const limiter = store.limiter({ limit: '1/s' });
  assert.throws(() => rl.middleware(), typeError(/limiter/));
  assert.throws(() => rl.middleware({ limiter: {} }), typeError(/limiter/));
  assert.throws(() => rl.middleware({ limiter, key: 'ip' }), typeError(/key/));
  assert.throws(() => rl.middleware({ limiter, cost: 1 }), typeError(/cost/));
  store.close();

  const { RedisTokenBucket } = rl;
  assert.throws(() => new RedisTokenBucket(42, 'k', 1, 1), typeError(/redisOptionsOrUrl/));
  assert.throws(() => new RedisTokenBucket('memory://', '', 1, 1), typeError(/key/));
  assert.throws(() => new RedisTokenBucket('memory://', 'k', 0, 1), typeError(/capacity/));
  assert.throws(() => new RedisTokenBucket('memory://', 'k', 1.5, 1), typeError(/capacity/));
  assert.throws(() => new RedisTokenBucket('memory://', 'k', 1, 0), typeError(/refillRate/));
  assert.throws(() => new RedisTokenBucket('memory://', 'k', 1, '1'), typeError(/refillRate/));
  assert.throws(() => new RedisTokenBucket('memory://', 'k', 1, 1, { onError: 1 }), typeError(/onError/));
  const bucket = new RedisTokenBucket('memory://', 'k', 1, 1);
  await assert.rejects(bucket.allowRequest(-1), rlError('RL_E_INVALID_ARG', /cost/));
  await assert.rejects(bucket.allowRequest('1'), TypeError);
  await assert.rejects(bucket.getTimeUntilNextToken(1.5), TypeError);
  await assert.rejects(new RedisTokenBucket('bogus://', 'k', 1, 1).allowRequest(), rlError('RL_E_INVALID_ARG', /scheme/));
  RedisTokenBucket.closeAll();
});
