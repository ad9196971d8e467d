'use strict';
// Lifecycle: no growth over many open/close rounds, a process that never
// closes its store still exits (and does not crash when it exits with calls
// in flight), close() rejects calls in flight with RL_E_SHUTDOWN, and
// worker_threads each get their own working addon state.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const fs = require('node:fs');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { Worker } = require('node:worker_threads');
const rl = require('..');
const { storeConfigs, redisUrl, noRedis, uniqueName } = require('./support/stores');

const run = promisify(execFile);
const support = (file) => path.join(__dirname, 'support', file);

// The documented bound (README "Lifecycle"): RSS may grow by at most this
// much over 10,000 open/limiter/acquire/close rounds after 1,000 warm-up rounds.
// A Redis store runs an I/O thread, and glibc keeps each thread's malloc
// arena after the thread ends: RSS then drifts by 4-10 MiB over 10,000
// stores while the heap in use stays flat (mallinfo2 of the same loop in C:
// 106 KB in use after 5,000, 10,000, 15,000 and 20,000 rounds), so Redis
// stores get a wider bound than memory://, whose stores start no thread.
const RSS_BOUND_BYTES = 8 * 1024 * 1024;
const RSS_BOUND_WITH_THREADS_BYTES = 16 * 1024 * 1024;
const ROUNDS = 10000;

for (const config of storeConfigs) {
  const bound = config.url.startsWith('memory') ? RSS_BOUND_BYTES : RSS_BOUND_WITH_THREADS_BYTES;
  test(`${ROUNDS} stores and limiters opened and closed on ${config.label}: RSS stays within ${bound >> 20} MiB`, async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', support('open-close-loop.js'), config.url, String(config.inline), String(ROUNDS)],
      { timeout: 240000 },
    );
    const { growth } = JSON.parse(stdout);
    assert.ok(growth < bound, `RSS grew by ${growth} bytes`);
  });

  for (const mode of ['idle', 'exit-in-flight']) {
    test(`a process that never closes its ${config.label} store exits (${mode})`, async () => {
      const { stdout, stderr } = await run(process.execPath, [support('never-close.js'), config.url, String(config.inline), mode], {
        timeout: 20000,
      });
      assert.equal(stdout.trim(), mode === 'idle' ? 'done' : 'exiting');
      assert.equal(stderr, '');
    });
  }
}

test('calls in flight at close() settle: answered before it, or RL_E_SHUTDOWN', async () => {
  const store = await rl.open('memory://', {}, { inline: false });
  const limiter = store.limiter({ limit: '1000000/s' });
  const calls = [];
  for (let i = 0; i < 20000; i++) {
    calls.push(limiter.acquire(`k${i % 64}`).then(() => 'answered', (err) => err.code));
  }
  store.close();
  const outcomes = await Promise.all(calls);
  const counts = { answered: 0, RL_E_SHUTDOWN: 0 };
  for (const outcome of outcomes) counts[outcome]++;
  assert.equal(counts.answered + counts.RL_E_SHUTDOWN, calls.length, JSON.stringify(counts));
  await assert.rejects(limiter.acquire('k'), { code: 'RL_E_SHUTDOWN' });
});

test('calls in flight on a hung Redis reject with RL_E_SHUTDOWN at close()', { skip: noRedis }, async () => {
  const store = await rl.open(redisUrl);
  const limiter = store.limiter({ limit: '100/s', name: uniqueName('hung') });
  await limiter.acquire('k'); // connected
  const pid = Number(fs.readFileSync(path.join(process.env.RL_TEST_REDIS_DIR, 'redis.pid'), 'utf8'));
  process.kill(pid, 'SIGSTOP');
  try {
    const calls = [];
    for (let i = 0; i < 50; i++) calls.push(limiter.acquire(`k${i}`));
    calls.push(limiter.acquireBatch([{ key: 'a' }, { key: 'b' }]), limiter.reset('k'), limiter.peek('k'));
    store.close();
    const outcomes = await Promise.allSettled(calls);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.equal(outcome.reason.code, 'RL_E_SHUTDOWN');
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
});

function runWorker(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(support('worker.js'), { workerData });
    worker.once('message', (message) => (message.error ? reject(new Error(message.error)) : resolve({ worker, ...message })));
    worker.once('error', reject);
  });
}

test('worker_threads: each worker has its own stores, and ending one does not disturb the others', async () => {
  const name = uniqueName('workers');
  const runs = [true, false, true, false].map((inline) =>
    runWorker({ url: 'memory://', inline, name, limit: '50/1h', key: 'k', attempts: 80 }),
  );
  for (const { admitted, worker } of await Promise.all(runs)) {
    assert.equal(admitted, 50); // one memory store per worker
    await worker.terminate();
  }
  // A worker that leaves its store open with calls in flight, then is terminated.
  const left = await runWorker({ url: 'memory://', inline: false, name, limit: '50/1h', key: 'k', attempts: 1, leaveOpen: true });
  await left.worker.terminate();
  // The main thread's own store still works.
  const store = await rl.open('memory://', {}, { inline: false });
  assert.equal((await store.limiter({ limit: '1/s' }).acquire('k')).allowed, true);
  store.close();
});

// Answers that reach a worker whose JS has stopped are dropped, not turned
// into an error that node-addon-api would abort the process on.
test('worker_threads terminated while answers stream in end cleanly', async () => {
  for (let round = 0; round < 20; round++) {
    const { worker } = await runWorker({
      url: redisUrl ?? 'memory://',
      inline: false,
      name: uniqueName('flood'),
      limit: '5/1h',
      key: 'k',
      attempts: 1,
      leaveOpen: true,
      flood: true,
    });
    await new Promise((resolve) => setTimeout(resolve, round % 5));
    assert.equal(await worker.terminate(), 1);
  }
});

test('worker_threads share one Redis key exactly', { skip: noRedis }, async () => {
  const name = uniqueName('workers');
  const runs = [1, 2, 3, 4].map(() => runWorker({ url: redisUrl, inline: true, name, limit: '100/1h', key: 'shared', attempts: 60 }));
  const results = await Promise.all(runs);
  assert.equal(results.reduce((sum, r) => sum + r.admitted, 0), 100);
  await Promise.all(results.map((r) => r.worker.terminate()));
});
