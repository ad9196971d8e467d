'use strict';
// The idiomatic API on every store: decisions in milliseconds, peek,
// refund, reset, batches, acquireWait (timeout, abort, manual clock),
// status names and disposal. Exact algorithm semantics are the
// conformance suite's job; this checks what the binding adds.
const test = require('node:test');
const assert = require('node:assert');
const rl = require('..');
const { storeConfigs, uniqueName, withQuery } = require('./support/stores');

test('status names come from librl', () => {
  assert.equal(rl.status.RL_OK, 0);
  assert.equal(rl.status.RL_E_INVALID_ARG, 1);
  assert.equal(rl.status.RL_E_SHUTDOWN, 5);
  assert.ok(Object.isFrozen(rl.status));
  assert.match(rl.version, /^\d+\.\d+\.\d+$/);
  assert.equal(rl.maxKeyLength, 512);
  assert.ok(rl.settings.some((s) => s.name === 'limit' && s.description.length > 0));
  const err = new rl.RlError('RL_E_TIMEOUT', 'slow');
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'RlError');
});

test('limiter.limits are the limits librl parsed, long unit names included', async () => {
  const store = await rl.open('memory://');
  try {
    const limiter = store.limiter({ algorithm: 'gcra', limit: '10/sec, 1000/2hour', burst: '20, 1000' });
    assert.deepStrictEqual(limiter.limits.map((l) => ({ ...l })), [
      { limit: 10, windowUs: 1e6, burst: 20 },
      { limit: 1000, windowUs: 2 * 3600 * 1e6, burst: 1000 },
    ]);
    assert.ok(Object.isFrozen(limiter.limits) && Object.isFrozen(limiter.limits[0]));
  } finally {
    store.close();
  }
});

for (const config of storeConfigs) {
  const openManual = () => rl.open(withQuery(config.url, 'clock=manual'), {}, { inline: config.inline });

  test(`decisions on ${config.label}`, async () => {
    const store = await openManual();
    assert.equal(store.manualClock, true);
    store.clock.set(1000000);
    const limiter = store.limiter({ algorithm: 'gcra', limit: '10/s', burst: 2, name: uniqueName('api') });
    assert.deepEqual(limiter.settings, { algorithm: 'gcra', limit: '10/s', burst: '2', name: limiter.settings.name });
    assert.deepEqual(await limiter.acquire('k'), { allowed: true, limit: 10, remaining: 1, retryAfterMs: 0, resetAfterMs: 100, limitIndex: 0, source: 'store', suppressionFactor: 0 });
    assert.deepEqual(await limiter.acquire('k', 1n), { allowed: true, limit: 10, remaining: 0, retryAfterMs: 0, resetAfterMs: 200, limitIndex: 0, source: 'store', suppressionFactor: 0 });
    // Denied is a decision, not an error; microseconds become fractional ms.
    store.clock.advance(12345);
    assert.deepEqual(await limiter.acquire('k'), {
      allowed: false, limit: 10, remaining: 0, retryAfterMs: 87.655, resetAfterMs: 187.655, limitIndex: 0, source: 'store', suppressionFactor: 0,
    });
    // Above the burst: never (-1).
    assert.equal((await limiter.acquire('k', 3)).retryAfterMs, -1);
    assert.deepEqual(await limiter.peek('k', 0), { allowed: true, limit: 10, remaining: 0, retryAfterMs: 0, resetAfterMs: 187.655, limitIndex: 0, source: 'store', suppressionFactor: 0 });
    assert.equal((await limiter.refund('k', 1)).remaining, 1);
    assert.equal(await limiter.reset('k'), undefined);
    assert.equal((await limiter.peek('k', 0)).remaining, 2);
    // Binary keys are bytes: a Buffer and the string of the same bytes are one key.
    await limiter.acquire(Buffer.from('bytes'));
    assert.equal((await limiter.peek('bytes', 0)).remaining, 1);
    store.close();
    assert.equal(store.closed, true);
    store.close(); // idempotent
  });

  test(`acquireBatch on ${config.label}`, async () => {
    const store = await openManual();
    const limiter = store.limiter({ limit: '2/1h', name: uniqueName('batch') });
    const decisions = await limiter.acquireBatch([{ key: 'a' }, { key: 'a' }, { key: 'a' }, { key: 'b', cost: 2 }, { key: 'c', cost: 3 }]);
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, false, true, false]);
    assert.deepEqual(decisions.map((d) => d.remaining), [1, 0, 0, 0, 2]);
    store.close();
  });

  test(`suppressionFactor in single and batch decisions on ${config.label}`, async () => {
    const store = await openManual();
    // 16/4s is 4/s; 16 units in one second are 16/s: factor 1 - 4/16 in the band up to 32.
    const limiter = store.limiter({ algorithm: 'suppressed', limit: '16/4s', hardLimitFactor: 2, name: uniqueName('sf') });
    assert.equal((await limiter.acquire('k', 16)).suppressionFactor, 0);
    assert.equal((await limiter.peek('k')).suppressionFactor, 0.75);
    // Batches carry the factor too (rl_limiter_acquire_batch_async_versioned); above the hard limit it is 1.
    const decisions = await limiter.acquireBatch([{ key: 'k' }, { key: 'k', cost: 17 }]);
    assert.deepEqual(decisions.map((d) => [d.allowed, d.suppressionFactor]), [[decisions[0].allowed, 0.75], [false, 1]]);
    store.close();
  });

  test(`limitIndex, name and scheme come from librl on ${config.label}`, async () => {
    const store = await openManual();
    assert.equal(store.scheme, config.url.split(':')[0]);
    const unnamed = store.limiter({ limit: '1/s' });
    assert.equal(unnamed.name, 'default');
    // "100/s, 100/h": both limits are 100; only limitIndex tells which decided.
    const limiter = store.limiter({ limit: '100/s, 100/h', name: uniqueName('index') });
    assert.equal(limiter.name, limiter.settings.name);
    assert.equal((await limiter.acquire('k', 100)).limitIndex, 0);
    store.clock.advance(2000000);
    const denied = await limiter.acquire('k');
    assert.equal(denied.allowed, false);
    assert.equal(denied.limit, 100);
    assert.equal(denied.limitIndex, 1);
    store.close();
  });

  test(`decidesWith says what decides in Redis on ${config.label}`, async () => {
    const store = await openManual();
    if (config.url.startsWith('memory')) {
      assert.equal(store.decidesWith(), null);
      store.close();
      return;
    }
    // Under script_mode=auto the nodes are counted as calls reach them.
    assert.deepStrictEqual({ ...store.decidesWith() }, { scriptMode: 'auto', luaMode: 'functions', moduleNodes: 0, luaNodes: 0 });
    await store.limiter({ limit: '5/h', name: uniqueName('decides') }).acquire('k');
    const with_ = store.decidesWith();
    assert.equal(with_.moduleNodes + with_.luaNodes, 1);
    store.close();
    assert.equal(store.decidesWith().scriptMode, 'auto', 'works after close');
    const scripts = await rl.open(withQuery(config.url, 'script_mode=scripts'));
    assert.deepStrictEqual({ ...scripts.decidesWith() }, { scriptMode: 'scripts', luaMode: 'scripts', moduleNodes: 0, luaNodes: 0 });
    scripts.close();
  });

  test(`a call's timeoutMs reaches librl as its deadline on ${config.label}`, async () => {
    const store = await openManual();
    const limiter = store.limiter({ limit: '10/s', name: uniqueName('deadline') });
    assert.equal((await limiter.acquire('k', 1, { timeoutMs: 500 })).allowed, true);
    assert.equal((await limiter.peek('k', 0, { timeoutMs: Infinity })).remaining, 9);
    await assert.rejects(limiter.acquire('k', 1, { timeoutMs: -1 }), (e) => e.code === 'RL_E_INVALID_ARG' && /timeoutMs/.test(e.message));
    await assert.rejects(limiter.acquire('k', 1, { timeoutMs: '5' }), TypeError);
    await assert.rejects(limiter.acquire('k', 1, null), TypeError);
    store.close();
  });

  test(`acquireWait on a manual clock returns the first decision on ${config.label}`, async () => {
    const store = await openManual();
    const limiter = store.limiter({ limit: '1/1h', name: uniqueName('waitmanual') });
    assert.equal((await limiter.acquireWait('k')).allowed, true);
    const denied = await limiter.acquireWait('k', 1, { timeoutMs: Infinity });
    assert.equal(denied.allowed, false);
    assert.equal(denied.retryAfterMs, 3600000);
    store.close();
  });

  test(`acquireWait waits as told, gives up at its timeout, and honours abort on ${config.label}`, async () => {
    const store = await rl.open(config.url, {}, { inline: config.inline });
    // 1000/s with a burst of 1: the second call is told to retry in about 1 ms.
    const fast = store.limiter({ limit: '1000/1s', burst: 1, name: uniqueName('waitfast') });
    await fast.acquire('k');
    assert.equal((await fast.acquireWait('k', 1, { timeoutMs: 1000 })).allowed, true);
    // 1 per hour: waiting would pass any short timeout, so the denial returns at once.
    const slow = store.limiter({ limit: '1/1h', name: uniqueName('waitslow') });
    await slow.acquire('k');
    const started = performance.now();
    const denied = await slow.acquireWait('k', 1, { timeoutMs: 60000 });
    assert.equal(denied.allowed, false);
    assert.ok(performance.now() - started < 30000);
    // Cost above the burst: never, returned at once even without a timeout.
    assert.equal((await slow.acquireWait('k', 2)).retryAfterMs, -1);
    // Abort while waiting (the wait would be an hour long).
    const controller = new AbortController();
    const waiting = slow.acquireWait('k', 1, { signal: controller.signal });
    const reason = new Error('client went away');
    setImmediate(() => controller.abort(reason));
    await assert.rejects(waiting, (err) => err === reason);
    store.close();
  });

  test(`an aborted wait admitted later gives its units back on ${config.label}`, async () => {
    // On a manual clock the wait is admitted at once, but the answer comes
    // back through rl's thread: the abort, synchronous, comes first.
    const store = await openManual();
    const limiter = store.limiter({ limit: '1/1h', name: uniqueName('waitabort') });
    const controller = new AbortController();
    const waiting = limiter.acquireWait('k', 1, { signal: controller.signal });
    controller.abort(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    // Once librl's admission arrives, the refund follows: the key is full again.
    let remaining = 0;
    for (let i = 0; i < 1000 && remaining < 1; i++) {
      await new Promise(setImmediate); // lets rl's answer in (not a wait for time)
      remaining = (await limiter.peek('k', 0)).remaining;
    }
    assert.equal(remaining, 1);
    store.close();
  });

  test(`a wait aborted as its answer comes keeps it or gives it back, once, on ${config.label}`, async () => {
    // Waits whose answers arrive close together: each even wait's answer
    // aborts the next wait, whose admission may be on its way, delivered to
    // the binding already, or resolved. A wait that resolved keeps its
    // admission; any other is rejected and librl refunds it (rl_wait_cancel),
    // once: the key ends exactly at the admissions kept.
    const store = await openManual();
    const limiter = store.limiter({ limit: '100/1h', name: uniqueName('waitlate') });
    const controllers = Array.from({ length: 20 }, () => new AbortController());
    const waits = controllers.map((c) => limiter.acquireWait('k', 1, { signal: c.signal }));
    waits.forEach((w, i) => {
      if (i % 2 === 0) w.then(() => controllers[i + 1].abort(new Error('gone')));
    });
    const results = await Promise.allSettled(waits);
    assert.ok(results.every((r, i) => i % 2 === 1 || r.status === 'fulfilled'));
    const kept = results.filter((r) => r.status === 'fulfilled' && r.value.allowed).length;
    let remaining = 0;
    for (let i = 0; i < 1000 && remaining < 100 - kept; i++) {
      await new Promise(setImmediate); // lets rl's refunds in (not a wait for time)
      remaining = (await limiter.peek('k', 0)).remaining;
      assert.ok(remaining <= 100 - kept, `a refund counted twice: ${remaining}, ${kept} kept`);
    }
    assert.equal(remaining, 100 - kept, `${kept} of 20 kept`);
    store.close();
  });

  test(`Symbol.asyncDispose closes the store on ${config.label}`, async () => {
    const store = await rl.open(config.url, {}, { inline: config.inline });
    const limiter = store.limiter({ limit: '1/s' });
    assert.equal(typeof Symbol.asyncDispose, 'symbol');
    await store[Symbol.asyncDispose]();
    assert.equal(store.closed, true);
    await assert.rejects(limiter.acquire('k'), { code: 'RL_E_SHUTDOWN' });
  });
}
