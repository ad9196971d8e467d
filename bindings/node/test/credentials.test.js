'use strict';
// A store's password never shows: not in store.url, not when a Store,
// Limiter or RedisTokenBucket is printed (util.inspect, console.log),
// serialized (JSON.stringify) or walked, and not in the error of an open
// or a call that fails. Every URL shape of tests/data/url_shapes.yaml (the
// table every binding's tests share), and the AUTH servers of
// scripts/with-redis.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const YAML = require('yaml');
const rl = require('..');
const { RedisTokenBucket } = rl;

const passwordUrl = process.env.RL_TEST_REDIS_PASSWORD_URL;
const aclUrl = process.env.RL_TEST_REDIS_ACL_URL;
const noAuthServers = !(passwordUrl && aclUrl) && 'the AUTH servers of scripts/with-redis are not running';

const SHAPES_FILE = path.join(__dirname, '..', '..', '..', 'tests', 'data', 'url_shapes.yaml');
const shapes = YAML.parse(fs.readFileSync(SHAPES_FILE, 'utf8')).shapes;

// The password of a with-redis URL ('redis://[user]:PASSWORD@host:port').
const passwordOf = (url) => decodeURIComponent(new URL(url).password);

// Every way an object is commonly shown, as one string to search.
function shown(object) {
  return [
    util.inspect(object, { depth: Infinity, showHidden: true, getters: true }),
    util.format('%o %O %j %s', object, object, object, object),
    JSON.stringify(object) ?? '',
    object instanceof Error ? String(object.stack) : '',
  ].join('\n');
}

function assertNoSecret(shape, text, surface) {
  for (const secret of shape.secrets) {
    assert.ok(!text.includes(secret), `${shape.name}: ${surface} shows '${secret}':\n${text}`);
  }
}

// The error a promise rejects with (it must reject).
async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

test('the table of URL shapes has every shape', () => {
  assert.ok(shapes.length >= 12, `${shapes.length} shapes in ${SHAPES_FILE}`);
});

for (const shape of shapes) {
  test(`URL shape "${shape.name}": every surface shows only librl's display form`, async () => {
    if (shape.opens === false) {
      const err = await rejection(rl.open(shape.url));
      assert.equal(err.code, 'RL_E_INVALID_ARG');
      assertNoSecret(shape, shown(err), 'the refused open');
      return;
    }
    const store = await rl.open(shape.url);
    try {
      assert.equal(store.url, shape.display);
      const limiter = store.limiter({ limit: '5/s', name: 'credentials' });
      // On closed ports a call fails as an outage; memory:// decides.
      const outcome = await limiter.acquire('k').catch((err) => err);
      assertNoSecret(shape, shown(outcome), 'a call');
      for (const object of [store, limiter, limiter.store, { store, limiter }]) {
        assertNoSecret(shape, shown(object), 'the store or limiter');
      }
      assertNoSecret(shape, store.metrics(), 'the metrics');
    } finally {
      store.close();
    }
    assertNoSecret(shape, shown(store), 'the closed store');
    const refused = await rejection(rl.open(shape.refused));
    assert.equal(refused.code, 'RL_E_INVALID_ARG', refused.message);
    assertNoSecret(shape, shown(refused), 'the refused open');
  });
}

test('a RedisTokenBucket on every URL shape never shows a secret', async () => {
  for (const shape of shapes) {
    const bucket = new RedisTokenBucket(shape.url, 'credentials', 5, 1, { failOpen: false });
    const outcome = await bucket.allowRequest().catch((err) => err);
    assertNoSecret(shape, shown(outcome), 'the bucket\'s call');
    assertNoSecret(shape, shown(bucket), 'the bucket');
  }
  RedisTokenBucket.closeAll();
});

for (const [label, env] of [
  ['requirepass', 'RL_TEST_REDIS_PASSWORD_URL'],
  ['ACL user', 'RL_TEST_REDIS_ACL_URL'],
]) {
  test(`a Store and its Limiter opened with a password (${label}) never show it`, { skip: noAuthServers }, async () => {
    const url = process.env[env];
    const password = passwordOf(url);
    const store = await rl.open(url);
    try {
      assert.ok(!store.url.includes(password), store.url);
      assert.match(store.url, /\*\*\*@/);
      const limiter = store.limiter({ limit: '5/s', name: 'credentials' });
      assert.equal((await limiter.acquire('k')).allowed, true);
      for (const object of [store, limiter, limiter.store, { store, limiter }]) {
        assert.ok(!shown(object).includes(password), shown(object));
      }
    } finally {
      store.close();
    }
  });
}

test('a RedisTokenBucket made with a password never shows it', { skip: noAuthServers }, async () => {
  const password = passwordOf(aclUrl);
  const { hostname, port } = new URL(aclUrl);
  for (const connection of [aclUrl, { host: hostname, port: Number(port), username: 'rl-test', password }]) {
    const bucket = new RedisTokenBucket(connection, 'credentials', 5, 1, { failOpen: false });
    assert.equal(await bucket.allowRequest(), true);
    assert.ok(!shown(bucket).includes(password), shown(bucket));
  }
  RedisTokenBucket.closeAll();
});

test('an open refused for its credentials does not quote them', { skip: noAuthServers }, async () => {
  const wrong = 'wr0ng-pa55word';
  const url = aclUrl.replace(`:${passwordOf(aclUrl)}@`, `:${wrong}@`);
  await assert.rejects(rl.open(url), (err) => {
    assert.ok(err instanceof rl.RlError, `expected RlError, got ${err}`);
    assert.equal(err.code, 'RL_E_AUTH');
    assert.ok(!shown(err).includes(wrong), shown(err));
    assert.ok(!String(err.stack).includes(wrong), err.stack);
    return true;
  });
});

// librl's messages about a malformed URL name the url, but never quote the
// password in it (core/config/url.cpp; these fail until librl redacts them).
test('a malformed URL holding a password is refused without quoting it', async () => {
  const password = 's3cret-pw';
  for (const url of [
    `redis://user:${password}@:6379`,
    `redis://user:${password}%zz@host`,
    `redis://user:${password}@host?timeout_ms=%zz`,
    `redis://${password}@:6379`,
  ]) {
    await assert.rejects(rl.open(url), (err) => {
      assert.ok(err instanceof rl.RlError, `expected RlError, got ${err}`);
      assert.equal(err.code, 'RL_E_INVALID_ARG');
      assert.match(err.message, /url/);
      assert.ok(!shown(err).includes(password) && !String(err.stack).includes(password), err.message);
      return true;
    });
  }
});
