'use strict';
// Exactness across processes: 4 Node processes (the demo worker) hammer one
// Redis key through one gcra limit of 100 per hour. The window is far
// longer than the run, so nothing refills: exactly 100 are admitted in total.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { redisUrl, noRedis, uniqueName } = require('./support/stores');

const run = promisify(execFile);
const worker = path.resolve(__dirname, '..', '..', '..', 'examples', 'node', 'demo-worker.js');

test('4 processes on one Redis key admit exactly the limit', { skip: noRedis }, async () => {
  const name = uniqueName('exact');
  const processes = [1, 2, 3, 4].map(() =>
    run(process.execPath, [worker, redisUrl, name, '100/1h', 'shared', '250'], { timeout: 60000 }),
  );
  const reports = (await Promise.all(processes)).map(({ stdout }) => JSON.parse(stdout));
  for (const report of reports) {
    assert.equal(report.worker, 'node');
    assert.equal(report.admitted + report.denied, 250);
    if (report.denied > 0) assert.ok(report.retry_after_ms[0] > 0 && report.retry_after_ms[1] <= 3600000);
  }
  assert.equal(new Set(reports.map((r) => r.pid)).size, 4);
  assert.equal(reports.reduce((sum, r) => sum + r.admitted, 0), 100);
});

test('many calls in flight on one key admit exactly the limit', async (t) => {
  const rl = require('..');
  const urls = [['memory:// via the I/O thread', 'memory://', false], ...(redisUrl ? [['redis', redisUrl, true]] : [])];
  for (const [label, url, inline] of urls) {
    await t.test(label, async () => {
      const store = await rl.open(url, {}, { inline });
      const limiter = store.limiter({ limit: '300/1h', name: uniqueName('inflight') });
      const decisions = await Promise.all(Array.from({ length: 1000 }, () => limiter.acquire('one-key')));
      assert.equal(decisions.filter((d) => d.allowed).length, 300);
      store.close();
    });
  }
});
