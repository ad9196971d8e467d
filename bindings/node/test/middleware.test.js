'use strict';
// The middleware through real HTTP requests against the example server
// (examples/node/http-server.js: 5 requests a minute per API key, /bulk
// costs 5), on a manual clock so that every header value is exact.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { startServer } = require(path.resolve(__dirname, '..', '..', '..', 'examples', 'node', 'http-server.js'));
const fs = require('node:fs');
const YAML = require('yaml');
const { storeConfigs, withQuery } = require('./support/stores');
const { rateLimitHeaders } = require('../lib/rate-limit-headers');

async function get(port, urlPath, apiKey) {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, { headers: { 'x-api-key': apiKey } });
  return {
    status: res.status,
    policy: res.headers.get('ratelimit-policy'),
    rateLimit: res.headers.get('ratelimit'),
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
  };
}

// Redis keys outlive a run: each run uses API keys of its own.
const runId = `${process.pid}-${Date.now()}`;

for (const config of storeConfigs.filter((c) => c.inline)) {
  test(`the example server limits and labels requests on ${config.label}`, async () => {
    const app = await startServer({ url: withQuery(config.url, 'clock=manual'), port: 0 });
    try {
      const alice = `alice-${runId}`;
      // gcra 5/1m: one unit every 12 s, so a full bucket refills in 60 s.
      for (let i = 1; i <= 5; i++) {
        const r = await get(app.port, '/hello', alice);
        assert.equal(r.status, 200);
        assert.equal(r.policy, '"api";q=5;w=60');
        assert.equal(r.rateLimit, `"api";r=${5 - i};t=${12 * i}`);
        assert.equal(r.retryAfter, null);
        assert.deepEqual(JSON.parse(r.body), { hello: alice, path: '/hello' });
      }
      const denied = await get(app.port, '/hello', alice);
      assert.equal(denied.status, 429);
      assert.equal(denied.policy, '"api";q=5;w=60');
      assert.equal(denied.rateLimit, '"api";r=0;t=60');
      assert.equal(denied.retryAfter, '12');
      assert.equal(denied.body, 'Too Many Requests\n');

      // Another key has its own budget; /bulk takes 5 units at once.
      const bob = `bob-${runId}`;
      assert.equal((await get(app.port, '/bulk', bob)).rateLimit, '"api";r=0;t=60');
      const bulkAgain = await get(app.port, '/bulk', bob);
      assert.equal(bulkAgain.status, 429);
      assert.equal(bulkAgain.retryAfter, '60');

      // 11.5 s later alice still waits (Retry-After rounds up), at 12 s she is in.
      app.store.clock.advance(11500000);
      const early = await get(app.port, '/hello', alice);
      assert.equal(early.status, 429);
      assert.equal(early.retryAfter, '1');
      app.store.clock.advance(500000);
      assert.equal((await get(app.port, '/hello', alice)).status, 200);

      // A failure other than an outage reaches the server's error path
      // (here: 500, as Go's rlhttp answers by default).
      app.store.close();
      const failed = await get(app.port, '/hello', alice);
      assert.equal(failed.status, 500);
      assert.equal(failed.body, 'rate limiter failed: RL_E_SHUTDOWN\n');
      assert.equal(failed.rateLimit, null);
    } finally {
      app.close();
    }
  });
}

test('a cost above the burst is 429 without Retry-After (it can never be admitted)', async () => {
  const rl = require('..');
  const store = await rl.open('memory://');
  const limiter = store.limiter({ limit: '10/s, 100/1h', name: 'multi' });
  const headers = {};
  let status = 0;
  const res = { setHeader: (n, v) => (headers[n] = v), end() {}, set statusCode(s) { status = s; } };
  const rateLimit = rl.middleware({ limiter, key: () => 'k', cost: () => 11 });
  await rateLimit({}, res, () => assert.fail('next must not be called'));
  assert.equal(status, 429);
  assert.equal(headers['Retry-After'], undefined);
  assert.equal(headers['RateLimit-Policy'], '"multi-0";q=10;w=1, "multi-1";q=100;w=3600');
  store.close();
});

test('RateLimit names the limit that decided even when limits share a value', async () => {
  const rl = require('..');
  const store = await rl.open('memory://?clock=manual');
  const limiter = store.limiter({ limit: '100/s, 100/1h' });
  const rateLimit = rl.middleware({ limiter, key: () => 'k', cost: () => 100 });
  const call = async () => {
    const headers = {};
    const res = { setHeader: (n, v) => (headers[n] = v), end() {}, statusCode: 200 };
    await rateLimit({}, res, () => {});
    return headers;
  };
  assert.match((await call()).RateLimit, /^"default-0";r=0;/);
  store.clock.advance(2000000); // 100/s is full again, 100/1h is not: it decides
  const headers = await call();
  assert.equal(headers['RateLimit-Policy'], '"default-0";q=100;w=1, "default-1";q=100;w=3600');
  assert.match(headers.RateLimit, /^"default-1";r=0;/);
  store.close();
});

// key and cost may return promises (awaited, key's first); a key that
// throws, or rejects, goes to next(err) with nothing counted; a cost of
// undefined is 1; and a next that throws rejects the middleware's promise.
test('key and cost: promises, failures and undefined', async () => {
  const rl = require('..');
  const store = await rl.open('memory://?clock=manual');
  {
    const limiter = store.limiter({ limit: '10/1m', name: 'api' });
    const run = async (key, cost, next = () => {}) => {
      const headers = {};
      const req = {};
      const res = { setHeader: (n, v) => (headers[n] = v), end() {}, statusCode: 200 };
      let passedErr = null;
      await rl.middleware({ limiter, key, cost })(req, res, (err) => {
        passedErr = err ?? null;
        next();
      });
      return { headers, decision: req.rateLimit, err: passedErr };
    };
    const order = [];
    const asyncKey = async () => {
      order.push('key');
      return 'k';
    };
    const asyncCost = () => {
      order.push('cost');
      return Promise.resolve(3);
    };
    let r = await run(asyncKey, asyncCost);
    assert.deepEqual(order, ['key', 'cost']);
    assert.equal(r.decision.remaining, 7);
    assert.equal(r.headers.RateLimit, '"api";r=7;t=18');
    r = await run(() => 'k', () => Promise.resolve(2));
    assert.equal(r.decision.remaining, 5);
    r = await run(() => 'k', () => undefined);
    assert.equal(r.decision.remaining, 4);
    r = await run(() => {
      throw new Error('no key here');
    });
    assert.match(r.err.message, /no key here/);
    assert.equal(r.decision, undefined);
    r = await run(() => Promise.reject(new Error('no key later')));
    assert.match(r.err.message, /no key later/);
    r = await run(() => 'k', () => -1);
    assert.equal(r.err.code, 'RL_E_INVALID_ARG');
    assert.equal((await limiter.peek('k', 0)).remaining, 4, 'nothing was counted by the failures');
    await assert.rejects(
      run(() => 'k', () => 1, () => {
        throw new Error('from next');
      }),
      /from next/,
    );
  }
  store.close();
});

// A store outage under each onFailure (nothing listens on port 1).
async function outageAnswer(onFailure) {
  const rl = require('..');
  const store = await rl.open('redis://127.0.0.1:1');
  try {
    const limiter = store.limiter({ limit: '1/1m', name: 'api', onFailure });
    const rateLimit = rl.middleware({ limiter, key: () => 'k' });
    const headers = {};
    const answer = { status: 200, passed: false, body: undefined, headers };
    const req = {};
    const res = { setHeader: (n, v) => (headers[n] = v), end: (body) => (answer.body = body), set statusCode(s) { answer.status = s; } };
    await rateLimit(req, res, (err) => {
      assert.equal(err, undefined);
      answer.passed = true;
    });
    answer.source = req.rateLimit?.source;
    return answer;
  } finally {
    store.close();
  }
}

test('a store outage: onFailure open lets the request through, labelled, without RateLimit headers', async () => {
  const answer = await outageAnswer('open');
  assert.deepEqual([answer.passed, answer.status, answer.source], [true, 200, 'fail_open']);
  assert.deepEqual(answer.headers, {});
});

test('a store outage: onFailure local decides in this process, with headers', async () => {
  const answer = await outageAnswer('local');
  assert.deepEqual([answer.passed, answer.status, answer.source], [true, 200, 'local']);
  assert.equal(answer.headers.RateLimit, '"api";r=0;t=60');
});

test('a store outage: onFailure closed answers 503, never 429', async () => {
  const answer = await outageAnswer('closed');
  assert.deepEqual([answer.passed, answer.status, answer.source], [false, 503, undefined]);
  assert.match(answer.body, /^Service Unavailable/);
});

test('failOpen moved to the limiter: the middleware says where', async (t) => {
  const rl = require('..');
  const store = await rl.open('memory://');
  t.after(() => store.close());
  const limiter = store.limiter({ limit: '1/s' });
  assert.throws(() => rl.middleware({ limiter, failOpen: true }), { name: 'TypeError', message: /onFailure: 'open'/ });
});

// Every decision of conformance/http/headers.yaml, the table the C++, Go and
// Java tests read too: the middleware's header writer sends exactly its
// fields, byte for byte. Decisions come as JS has them (milliseconds).
test('the header fields of every decision of the shared table', () => {
  const file = path.join(__dirname, '..', '..', '..', 'conformance', 'http', 'headers.yaml');
  const { cases } = YAML.parse(fs.readFileSync(file, 'utf8'));
  assert.ok(cases.length >= 20, `${file} has ${cases.length} cases`);
  const ms = (us) => (us < 0 ? -1 : us / 1000);
  for (const c of cases) {
    const limiter = { name: c.limiter.name, limits: c.limiter.limits.map((l) => ({ limit: l.limit, windowUs: l.window_us })) };
    const d = c.decision;
    const decision = {
      allowed: d.allowed,
      remaining: d.remaining,
      retryAfterMs: ms(d.retry_after_us),
      resetAfterMs: ms(d.reset_after_us),
      limitIndex: d.limit_index,
      source: d.source,
    };
    const headersFor = rateLimitHeaders(limiter);
    if (c.error !== undefined) {
      assert.throws(() => headersFor(decision), (err) => err.code === 'RL_E_INVALID_ARG' && err.message.includes(c.error), c.name);
      continue;
    }
    assert.deepEqual(headersFor(decision), c.headers, c.name);
    // Again: the renderer hands RateLimit-Policy over once, then JS keeps it.
    assert.deepEqual(headersFor(decision), c.headers, `${c.name} (again)`);
  }
});
