'use strict';
// registerStoreMetrics with the real prom-client: a registry served over
// HTTP on loopback carries the store's decisions exactly, under librl's names.
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const promClient = require('prom-client');
const rl = require('..');
const { registerStoreMetrics, parseExposition } = require('@rl/node/prom-client') // the package's exports map, as a user reaches it;
const { redisUrl, noRedis, uniqueName, withQuery } = require('./support/stores');

async function decide(store, allowed, denied) {
  const limiter = store.limiter({ algorithm: 'gcra', limit: `${allowed}/h`, name: uniqueName('prom') });
  for (let i = 0; i < allowed + denied; i++) await limiter.acquire('k');
}

async function scrape(registry) {
  const server = http.createServer(async (req, res) => {
    res.setHeader('content-type', registry.contentType);
    res.end(await registry.metrics());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/metrics`);
    return await res.text();
  } finally {
    server.close();
  }
}

for (const [label, url] of [['memory://', 'memory://'], ['redis', redisUrl]]) {
  test(`one store's metrics are scraped with exact counts on ${label}`, { skip: url ? false : noRedis }, async () => {
    const store = await rl.open(url);
    try {
      await decide(store, 3, 2);
      const registry = new promClient.Registry();
      const names = registerStoreMetrics(store, { registry });
      assert.ok(names.includes('rl_decisions_total'), names.join(' '));
      const text = await scrape(registry);
      assert.match(text, /^rl_decisions_total\{verdict="allowed",source="store"\} 3$/m);
      assert.match(text, /^rl_decisions_total\{verdict="denied",source="store"\} 2$/m);
      assert.match(text, /^# TYPE rl_breaker_state gauge$/m);
      if (label === 'redis') assert.match(text, /^rl_store_round_trip_seconds_count 5$/m);
      // What prom-client serves parses back to librl's own samples.
      const ours = parseExposition(store.metrics());
      const served = parseExposition(text);
      assert.deepStrictEqual(served.get('rl_decisions_total'), ours.get('rl_decisions_total'));
    } finally {
      await store.close();
    }
  });
}

test('several stores share one registry by label', { skip: noRedis }, async () => {
  const edge = await rl.open('memory://');
  const main = await rl.open(withQuery(redisUrl, `prefix=${uniqueName('prom')}`));
  try {
    await decide(edge, 1, 0);
    await decide(main, 2, 1);
    const registry = new promClient.Registry();
    registerStoreMetrics({ edge, main }, { registry });
    const text = await scrape(registry);
    assert.match(text, /^rl_decisions_total\{verdict="allowed",source="store",store="edge"\} 1$/m);
    assert.match(text, /^rl_decisions_total\{verdict="allowed",source="store",store="main"\} 2$/m);
    assert.match(text, /^rl_decisions_total\{verdict="denied",source="store",store="main"\} 1$/m);
    // prom-client takes each name once: a second registration is refused.
    assert.throws(() => registerStoreMetrics(main, { registry }), /already been registered/);
  } finally {
    await edge.close();
    await main.close();
  }
});

test('bad stores are refused', () => {
  assert.throws(() => registerStoreMetrics({}), /stores must be a Store/);
  assert.throws(() => registerStoreMetrics({ x: 'memory://' }), /stores must be a Store/);
});
