'use strict';
// Exactness across processes: 4 Node processes (the demo worker), released
// together, hammer one Redis key through one gcra limit of 100 per hour.
// The window is far longer than the run, so nothing refills: exactly 100
// are admitted in total.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { redisUrl, noRedis, uniqueName } = require('./support/stores');

const worker = path.resolve(__dirname, '..', '..', '..', 'examples', 'node', 'demo-worker.js');

// Starts a demo worker; resolves once it is ready (examples/README.md has
// the protocol) to { start, report }: start() sends the start signal, and
// report resolves to its JSON line.
function startWorker(args) {
  const child = spawn(process.execPath, [worker, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  const exited = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`worker exited ${code}`))));
  });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const wasReady = stdout.startsWith('ready\n');
      stdout += chunk;
      if (!wasReady && stdout.startsWith('ready\n')) {
        resolve({
          start: () => child.stdin.end('start\n'),
          report: exited.then((out) => JSON.parse(out.slice('ready\n'.length))),
        });
      }
    });
    exited.then(() => reject(new Error(`worker ended without getting ready: ${stdout}`)), reject);
  });
}

test('4 processes on one Redis key, released together, admit exactly the limit', { skip: noRedis, timeout: 60000 }, async () => {
  const name = uniqueName('exact');
  const workers = await Promise.all([1, 2, 3, 4].map(() => startWorker([redisUrl, name, '100/1h', 'shared', '250'])));
  for (const { start } of workers) start();
  const reports = await Promise.all(workers.map(({ report }) => report));
  for (const report of reports) {
    assert.equal(report.worker, 'node');
    assert.equal(report.admitted + report.denied, 250);
    assert.ok(report.first_call_us > 0 && report.last_return_us >= report.first_call_us);
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
