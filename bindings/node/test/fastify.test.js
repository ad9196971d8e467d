'use strict';
// The Fastify plugin in a real Fastify server on loopback, answering real
// HTTP requests: the same decisions and header bytes as the Express
// middleware, per-route limits and opt-outs, 503 for an outage, one limit
// shared by two servers on Redis, bad options refused at startup.
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const Fastify = require('fastify');
const rl = require('..');
const rlFastify = require('@rl/node/fastify');
const { redisUrl, noRedis, uniqueName, withQuery } = require('./support/stores');

const FIELDS = ['ratelimit-policy', 'ratelimit', 'retry-after'];

async function get(port, path, apiKey = 'alice') {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': apiKey } });
  const headers = Object.fromEntries(FIELDS.map((f) => [f, res.headers.get(f)]));
  return { status: res.status, headers, body: await res.text() };
}

async function fastifyServer(store, name, extra = (app) => app) {
  const app = Fastify();
  const limiter = store.limiter({ algorithm: 'gcra', limit: '5/1m', name });
  await app.register(rlFastify, { limiter, key: (req) => req.headers['x-api-key'] });
  app.get('/', async (req) => ({ remaining: req.rateLimit.remaining }));
  extra(app, store);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: app.server.address().port };
}

async function expressLikeServer(store, name) {
  const limit = rl.middleware({
    limiter: store.limiter({ algorithm: 'gcra', limit: '5/1m', name }),
    key: (req) => req.headers['x-api-key'],
  });
  const server = http.createServer((req, res) => limit(req, res, () => res.end('ok')));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: server.address().port };
}

test('Fastify answers as the Express middleware does, header for header', async () => {
  const fstore = await rl.open('memory://?clock=manual');
  const estore = await rl.open('memory://?clock=manual');
  const { app, port } = await fastifyServer(fstore, 'api');
  const { server, port: eport } = await expressLikeServer(estore, 'api');
  try {
    for (let i = 1; i <= 7; i++) {
      const f = await get(port, '/');
      const e = await get(eport, '/');
      assert.strictEqual(f.status, i <= 5 ? 200 : 429, `request ${i}`);
      assert.strictEqual(f.status, e.status);
      assert.deepStrictEqual(f.headers, e.headers, `request ${i}`);
      assert.ok(f.headers.ratelimit && f.headers['ratelimit-policy']);
      if (i > 5) assert.ok(Number(f.headers['retry-after']) >= 1);
    }
  } finally {
    await app.close();
    server.close();
    await fstore.close();
    await estore.close();
  }
});

test('a route has its own limit, or none', async () => {
  const store = await rl.open('memory://?clock=manual');
  const { app, port } = await fastifyServer(store, 'api', (a) => {
    const bulk = store.limiter({ algorithm: 'fixed_window', limit: '10/1m', name: 'bulk' });
    a.get('/bulk', { config: { rateLimit: { limiter: bulk, cost: () => 5 } } }, async () => 'bulk');
    a.get('/health', { config: { rateLimit: false } }, async () => 'ok');
  });
  try {
    assert.deepStrictEqual((await get(port, '/bulk')).status, 200);
    assert.deepStrictEqual((await get(port, '/bulk')).status, 200);
    const third = await get(port, '/bulk');
    assert.strictEqual(third.status, 429);
    for (let i = 0; i < 20; i++) {
      const health = await get(port, '/health');
      assert.strictEqual(health.status, 200);
      assert.strictEqual(health.headers.ratelimit, null);
    }
    assert.strictEqual((await get(port, '/')).status, 200); // the default limit is untouched
  } finally {
    await app.close();
    await store.close();
  }
});

test('a store outage is 503 under on_failure=closed, and open lets requests through without fields', async () => {
  const store = await rl.open('redis://127.0.0.1:1?connect_timeout_ms=100&timeout_ms=100&breaker_failures=0');
  const closedApp = Fastify();
  await closedApp.register(rlFastify, { limiter: store.limiter({ limit: '5/1m' }), key: () => 'k' });
  closedApp.get('/', async () => 'ok');
  const openApp = Fastify();
  await openApp.register(rlFastify, { limiter: store.limiter({ limit: '5/1m', onFailure: 'open' }), key: () => 'k' });
  openApp.get('/', async () => 'ok');
  await closedApp.listen({ port: 0, host: '127.0.0.1' });
  await openApp.listen({ port: 0, host: '127.0.0.1' });
  try {
    const closed = await get(closedApp.server.address().port, '/');
    assert.strictEqual(closed.status, 503);
    assert.match(closed.body, /rate limiter store unreachable/);
    const open = await get(openApp.server.address().port, '/');
    assert.strictEqual(open.status, 200);
    assert.strictEqual(open.headers.ratelimit, null);
  } finally {
    await closedApp.close();
    await openApp.close();
    await store.close();
  }
});

test('two servers on one Redis share one limit', { skip: noRedis }, async () => {
  const name = uniqueName('fastify');
  const a = await rl.open(withQuery(redisUrl, 'clock=manual'));
  const b = await rl.open(withQuery(redisUrl, 'clock=manual'));
  const one = await fastifyServer(a, name);
  const two = await fastifyServer(b, name);
  try {
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await get(i % 2 ? two.port : one.port, '/', `bob-${name}`)).status);
    assert.deepStrictEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
  } finally {
    await one.app.close();
    await two.app.close();
    await a.close();
    await b.close();
  }
});

test('bad options are refused at startup, naming them', async () => {
  const store = await rl.open('memory://');
  try {
    const app = Fastify();
    app.register(rlFastify, { limiter: 'not a limiter' });
    await assert.rejects(app.ready(), /@rl\/node\/fastify: limiter: must be a limiter/);
    const app2 = Fastify();
    await app2.register(rlFastify, { limiter: store.limiter({ limit: '1/s' }) });
    assert.throws(
      () => app2.get('/x', { config: { rateLimit: { cost: 5 } } }, async () => 'x'),
      /route GET \/x: cost: must be a function/,
    );
    const app3 = Fastify();
    app3.register(rlFastify, { global: true });
    await assert.rejects(app3.ready(), /limiter: is required with global: true/);
  } finally {
    await store.close();
  }
});

test('the example server answers as its header says', async () => {
  const { startServer } = require('../../../examples/node/fastify-server.js');
  const { port, close } = await startServer({ url: 'memory://?clock=manual', port: 0 });
  try {
    for (let i = 1; i <= 5; i++) assert.strictEqual((await get(port, '/hello', 'eve')).status, 200);
    assert.strictEqual((await get(port, '/hello', 'eve')).status, 429);
    assert.strictEqual((await get(port, '/health', 'eve')).status, 200);
    const metrics = await get(port, '/metrics', 'eve');
    assert.match(metrics.body, /^rl_decisions_total\{verdict="denied",source="store"\} 1$/m);
  } finally {
    await close();
  }
});
