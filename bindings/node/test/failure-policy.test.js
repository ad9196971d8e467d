'use strict';
// The core's failure policy through Node: decision.source, the limiter
// settings onFailure/localShare, the store's stats(), metrics() and
// isHealthy(), on a real unreachable store (nothing listens on port 1, so
// every call is an outage) and on the real test Redis.
const test = require('node:test');
const assert = require('node:assert');
const rl = require('..');
const { redisUrl, noRedis, uniqueName } = require('./support/stores');

// Two outages open the breaker; the manual clock keeps it open (no cool-down passes).
const DEAD_URL = 'redis://127.0.0.1:1?clock=manual&breaker_failures=2';

test('onFailure open: every outage is allowed, labelled fail_open, and counted', async (t) => {
  const store = await rl.open(DEAD_URL);
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '1/1m', onFailure: 'open' });
  assert.equal(store.isHealthy(), true);
  for (let i = 0; i < 5; i++) {
    const d = await limiter.acquire('k');
    assert.deepEqual({ allowed: d.allowed, source: d.source }, { allowed: true, source: 'fail_open' });
  }
  const stats = store.stats();
  assert.equal(stats.decisions.fail_open.allowed, 5);
  assert.equal(stats.decisions.store.allowed + stats.decisions.store.denied, 0);
  assert.equal(stats.breaker, 'open');
  assert.equal(stats.breakerOpened, 1);
  assert.equal(stats.healthy, false);
  assert.equal(store.isHealthy(), false);
  assert.match(store.metrics(), /^rl_decisions_total\{verdict="allowed",source="fail_open"\} 5$/m);
  assert.match(store.metrics(), /^rl_breaker_state 1$/m);
});

test('onFailure local: a local limiter with localShare of the limit decides', async (t) => {
  const store = await rl.open(DEAD_URL);
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '8/1m', onFailure: 'local', localShare: '1/4' });
  const decisions = [];
  for (let i = 0; i < 3; i++) decisions.push(await limiter.acquire('k'));
  assert.deepEqual(
    decisions.map((d) => [d.allowed, d.source]),
    [[true, 'local'], [true, 'local'], [false, 'local']],
  );
  assert.deepEqual(store.stats().decisions.local, { allowed: 2, denied: 1 });
});

test('onFailure closed (the default): the outage is the RlError, counted by status', async (t) => {
  const store = await rl.open(DEAD_URL);
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '1/1m' });
  for (let i = 0; i < 3; i++) {
    await assert.rejects(limiter.acquire('k'), { name: 'RlError', code: 'RL_E_BACKEND_UNAVAILABLE' });
  }
  const { failures, breaker } = store.stats();
  assert.equal(failures.RL_E_BACKEND_UNAVAILABLE, 3);
  assert.equal(failures.RL_E_TIMEOUT, 0);
  assert.equal(breaker, 'open');
  // Bad input is never an outage: no policy hides it.
  const open = store.limiter({ limit: '1/1m', onFailure: 'open' });
  await assert.rejects(open.acquire('k', 0), { code: 'RL_E_INVALID_ARG' });
});

test('a bad onFailure names the setting', async (t) => {
  const store = await rl.open('memory://');
  t.after(() => store.close());
  assert.throws(() => store.limiter({ limit: '1/s', onFailure: 'sometimes' }), { code: 'RL_E_INVALID_ARG', message: /on_failure/ });
});

test('stats and metrics of a Redis store: decisions by the store, round trips timed', { skip: noRedis }, async (t) => {
  const store = await rl.open(redisUrl);
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '2/1m', name: uniqueName('stats') });
  for (let i = 0; i < 3; i++) assert.equal((await limiter.acquire('k')).source, 'store');
  const stats = store.stats();
  assert.deepEqual(stats.decisions.store, { allowed: 2, denied: 1 });
  assert.equal(stats.breaker, 'closed');
  assert.ok(stats.roundTrip.count >= 3, `${stats.roundTrip.count} round trips`);
  const { p50Ms, p95Ms, p99Ms, maxMs } = stats.roundTrip;
  assert.ok(p50Ms > 0 && p50Ms <= p95Ms && p95Ms <= p99Ms, JSON.stringify(stats.roundTrip));
  assert.ok(maxMs > 0, JSON.stringify(stats.roundTrip));
  assert.equal(store.isHealthy(), true);
  const text = store.metrics();
  assert.match(text, /^rl_decisions_total\{verdict="denied",source="store"\} 1$/m);
  assert.match(text, /^rl_store_round_trip_seconds\{quantile="0.99"\} [0-9.e-]+$/m);
  store.close();
  assert.deepEqual(store.stats().decisions.store, { allowed: 2, denied: 1 }, 'stats outlive close');
});

test('memory:// has no round trips, and decisions come from the store', async (t) => {
  const store = await rl.open('memory://');
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '1/1m' });
  assert.equal((await limiter.acquire('k')).source, 'store');
  assert.equal(limiter.tryAcquire('k').source, 'store');
  const stats = store.stats();
  assert.deepEqual(stats.decisions.store, { allowed: 1, denied: 1 });
  assert.equal(stats.roundTrip.count, 0);
  assert.equal(store.isHealthy(), true);
});

test('stats() counts the leases of every limiter of the store', async (t) => {
  const store = await rl.open('memory://?clock=manual');
  t.after(() => store.close());
  const settings = { algorithm: 'fixed_window', limit: '10/s', lease: 'auto', leaseThreshold: '20', leaseShare: '1/2' };
  const one = store.limiter(settings);
  const two = store.limiter(settings);
  let allowed = 0;
  for (let i = 0; i < 12; i++) allowed += (await one.acquire('k')).allowed ? 1 : 0;
  for (let i = 0; i < 3; i++) allowed += (await two.acquire('k')).allowed ? 1 : 0;
  assert.ok(allowed <= 10, `${allowed} allowed`);
  const { leases, decisions } = store.stats();
  assert.ok(leases.taken >= 1 && leases.unitsLeased >= leases.taken, JSON.stringify(leases));
  assert.ok(leases.decisions >= 1 && leases.decisions <= leases.unitsLeased, JSON.stringify(leases));
  assert.ok(leases.unitsReturned <= leases.unitsUnused, JSON.stringify(leases));
  assert.equal(decisions.store.allowed, allowed, 'a decision from a slice counts as the store\'s');
  assert.match(store.metrics(), new RegExp(`^rl_lease_taken_total ${leases.taken}$`, 'm'));
});

test('memory:// without leases counts none', async (t) => {
  const store = await rl.open('memory://');
  t.after(() => store.close());
  await store.limiter({ limit: '5/s' }).acquire('k');
  assert.deepEqual(store.stats().leases, { taken: 0, unitsLeased: 0, unitsUnused: 0, unitsReturned: 0, decisions: 0 });
});
