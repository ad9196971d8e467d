#!/usr/bin/env node
'use strict';
// rl's Node binding beside rate-limiter-flexible (RateLimiterRedis with
// ioredis, RateLimiterMemory) and the seed-style ioredis Lua token bucket,
// against one redis-server, in one run:
//   (a) a sequential await loop: p50/p99 latency per decision
//   (b) 200 promises in flight: decisions per second, p99 latency
//   (c) memory store vs RateLimiterMemory: decisions per second
// Limits are high enough that every request is admitted (a denial in
// rate-limiter-flexible is a rejected promise, which would measure
// exceptions), keys rotate over 1,000 users. Each measurement runs in
// alternating rounds; the table shows the median round.
//   scripts/with-redis -- node bench/node/bench.js      (from the repo root)
// With --json (as bench/run uses it) it prints JSON lines instead, for the
// contenders of bench/run's table: rl gcra, rl fixed_window,
// rate-limiter-flexible and the seed token bucket at 1 and 200 in flight
// (decisions/s, p50, p99, Redis CPU per decision), and with
// RL_BENCH_MODULE_URL (a server with rl's Redis module) rl gcra and rl
// fixed_window there with script_mode=module ("rl gcra module"), and on memory:// the synchronous limiter.tryAcquire
// (when the binding has it) beside RateLimiterMemory. --phases picks some of
// sequential,inflight,memory. RL_BENCH_STORE_OPTIONS (URL query settings)
// is appended to rl's store URL.
const Redis = require('ioredis');
const { RateLimiterRedis, RateLimiterMemory } = require('rate-limiter-flexible');
const rl = require('../../bindings/node');
const { SeedTokenBucket } = require('./seed-token-bucket');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL_CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 4000);
const IN_FLIGHT = 200;
const IN_FLIGHT_CALLS = Number(process.env.BENCH_IN_FLIGHT_CALLS ?? 40000);
const MEMORY_CALLS = Number(process.env.BENCH_MEMORY_CALLS ?? 400000);
const KEYS = Array.from({ length: 1000 }, (_, i) => `user:${i}`);
const HUGE = 1e9;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

// Runs `calls` decisions with `lanes` promises in flight; returns
// decisions/s and per-decision latency percentiles (us).
async function measure(decide, calls, lanes, timeLatency = true) {
  const latencies = timeLatency ? new Float64Array(calls) : null;
  let next = 0;
  const lane = async () => {
    while (next < calls) {
      const i = next++;
      if (!timeLatency) {
        await decide(KEYS[i % KEYS.length]);
        continue;
      }
      const start = process.hrtime.bigint();
      await decide(KEYS[i % KEYS.length]);
      latencies[i] = Number(process.hrtime.bigint() - start) / 1000;
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: lanes }, lane));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = timeLatency ? latencies.sort() : null;
  return {
    perSecond: calls / seconds,
    p50: timeLatency ? percentile(sorted, 50) : NaN,
    p99: timeLatency ? percentile(sorted, 99) : NaN,
  };
}

// A synchronous decide (no promise) called back to back: decisions/s.
function measureSync(decide, calls) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) decide(KEYS[i % KEYS.length]);
  return { perSecond: calls / (Number(process.hrtime.bigint() - started) / 1e9), p50: NaN, p99: NaN };
}

// Every contender's median round of one measurement, rounds alternating
// between contenders so that drifts of the machine hit all of them alike.
// A contender with `sync: true` decides without a promise; one with `lanes`
// keeps that many in flight instead.
// With `admin` (an ioredis client), each round also records the server's
// CPU per decision (INFO commandstats), the stable measure on this machine,
// and its main thread's CPU time per decision (INFO cpu, getrusage).
async function compare(contenders, calls, lanes, timeLatency, admin) {
  const once = (c, n, time) => (c.sync ? measureSync(c.decide, n) : measure(c.decide, n, c.lanes ?? lanes, time));
  const rounds = new Map(contenders.map((c) => [c.name, []]));
  await Promise.all(contenders.map((c) => once(c, Math.min(calls, 2000), false))); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of contenders) {
      // A contender on another server (rl's module's) reads that server's stats.
      const stats = c.admin ?? admin;
      if (stats) await stats.config('RESETSTAT');
      const cpuBefore = stats ? mainThreadCpuUsec(await stats.info('cpu')) : 0;
      const result = await once(c, calls, timeLatency);
      if (stats) {
        result.serverUs = serverUsecPerDecision(await stats.info('commandstats'), calls);
        result.serverCpuUs = (mainThreadCpuUsec(await stats.info('cpu')) - cpuBefore) / calls;
      }
      rounds.get(c.name).push(result);
    }
  }
  return contenders.map((c) => {
    const results = rounds.get(c.name);
    const med = (field) => median(results.map((x) => x[field]));
    return {
      name: c.name, perSecond: med('perSecond'), p50: med('p50'), p99: med('p99'), serverUs: med('serverUs'),
      serverCpuUs: med('serverCpuUs'),
    };
  });
}

// Microseconds of redis-server CPU per decision since the last RESETSTAT:
// every command's time (scripts, and whatever else a contender sends), but
// for the admin connection's own INFO and CONFIG. When scripts or
// transactions ran, only the commands clients sent count: the commands a
// script or EXEC ran are listed too, and their time is already in its
// (bench/README.md, "Redis CPU per decision").
const RUNS_OTHERS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro', 'exec']);
const entryCommand = (c) => RUNS_OTHERS.has(c) || c === 'multi' || c.startsWith('script|') || c.startsWith('function|') || c.includes('.');
function serverUsecPerDecision(commandstats, decisions) {
  const commands = [...commandstats.matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)]
    .map(([, command, u]) => [command, Number(u)])
    .filter(([command]) => command !== 'info' && command !== 'config');
  const nested = commands.some(([command]) => RUNS_OTHERS.has(command));
  let usec = 0;
  for (const [command, u] of commands) if (!nested || entryCommand(command)) usec += u;
  return usec / decisions;
}

// redis-server's main thread's CPU time so far (getrusage: time it ran, not
// wall time): commandstats' usec is the wall time around each command, which
// also counts the time the thread was preempted inside it; this one also
// counts reading, parsing and answering each command, and the server's cron.
function mainThreadCpuUsec(info) {
  const seconds = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)[1]);
  return (seconds('used_cpu_sys_main_thread') + seconds('used_cpu_user_main_thread')) * 1e6;
}

function table(title, rows, baseline, columns) {
  const base = rows.find((r) => r.name === baseline);
  console.log(`\n${title}`);
  const header = ['contender', ...columns.map((c) => c.label), `vs ${baseline}`];
  const lines = rows.map((r) => [
    r.name,
    ...columns.map((c) => c.format(r[c.field])),
    `${(r.perSecond / base.perSecond).toFixed(2)}x`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(row(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(row(l));
}

const perSecond = { label: 'decisions/s', field: 'perSecond', format: (v) => Math.round(v).toLocaleString('en-US') };
const p50 = { label: 'p50 us', field: 'p50', format: (v) => v.toFixed(0) };
const p99 = { label: 'p99 us', field: 'p99', format: (v) => v.toFixed(0) };
const serverUs = { label: 'redis CPU us/decision', field: 'serverUs', format: (v) => v.toFixed(1) };

// rl's store URL: a prefix of this run's own, and the settings under test.
function rlUrl(url, prefix) {
  const options = process.env.RL_BENCH_STORE_OPTIONS;
  return `${url}${url.includes('?') ? '&' : '?'}prefix=${prefix}${options ? `&${options}` : ''}`;
}

// bench/run's measurements, one JSON line per contender and phase.
async function harness(url, phases) {
  const prefix = `bench${process.pid}`;
  const emit = (phase, rows) => {
    for (const r of rows) {
      console.log(JSON.stringify({
        bench: 'node', phase, contender: r.name, rounds: ROUNDS, per_second: r.perSecond,
        p50_us: r.p50, p99_us: r.p99, redis_us_per_decision: r.serverUs,
        redis_main_cpu_us_per_decision: r.serverCpuUs,
      }));
    }
  };
  if (phases.includes('sequential') || phases.includes('inflight')) {
    const store = await rl.open(rlUrl(url, prefix));
    const gcra = store.limiter({ algorithm: 'gcra', limit: `${HUGE}/1h`, name: 'bench' });
    const window = store.limiter({ algorithm: 'fixed_window', limit: `${HUGE}/1h`, name: 'benchfw' });
    const redis = new Redis(url, { keyPrefix: `${prefix}:` });
    const admin = new Redis(url);
    const flexible = new RateLimiterRedis({ storeClient: redis, points: HUGE, duration: 3600, keyPrefix: 'rlflx' });
    const seedBuckets = new Map(KEYS.map((k) => [k, new SeedTokenBucket(redis, `seed:${k}`, HUGE, HUGE / 3600)]));
    const contenders = [
      { name: 'rl gcra', decide: async (k) => allowedOrThrow((await gcra.acquire(k)).allowed) },
      { name: 'rl fixed_window', decide: async (k) => allowedOrThrow((await window.acquire(k)).allowed) },
      { name: 'rate-limiter-flexible', decide: async (k) => allowedOrThrow((await flexible.consume(k)).remainingPoints >= 0) },
      { name: 'seed token bucket', decide: async (k) => allowedOrThrow(await seedBuckets.get(k).allowRequest()) },
    ];
    // rl on the server with its Redis module (bench/run: RL_BENCH_MODULE_URL), script_mode=module.
    const moduleUrl = process.env.RL_BENCH_MODULE_URL;
    let moduleStore, moduleAdmin;
    if (moduleUrl) {
      moduleStore = await rl.open(`${rlUrl(moduleUrl, `${prefix}m`)}&script_mode=module`);
      moduleAdmin = new Redis(moduleUrl);
      for (const algorithm of ['gcra', 'fixed_window']) {
        const limiter = moduleStore.limiter({ algorithm, limit: `${HUGE}/1h`, name: `benchm${algorithm}` });
        contenders.push({
          name: `rl ${algorithm} module`, admin: moduleAdmin,
          decide: async (k) => allowedOrThrow((await limiter.acquire(k)).allowed),
        });
      }
    }
    if (phases.includes('sequential')) emit('sequential', await compare(contenders, SEQUENTIAL_CALLS, 1, true, admin));
    if (phases.includes('inflight')) emit('inflight', await compare(contenders, IN_FLIGHT_CALLS, IN_FLIGHT, true, admin));
    store.close();
    moduleStore?.close();
    redis.disconnect();
    admin.disconnect();
    moduleAdmin?.disconnect();
  }
  if (phases.includes('memory')) {
    const store = await rl.open('memory://');
    const limiter = store.limiter({ algorithm: 'gcra', limit: `${HUGE}/1h`, name: 'bench' });
    const flexibleMemory = new RateLimiterMemory({ points: HUGE, duration: 3600 });
    const peerDecide = async (k) => allowedOrThrow((await flexibleMemory.consume(k)).remainingPoints >= 0);
    // The peer at its best of both ways to await it.
    const contenders = [
      { name: 'RateLimiterMemory sequential', decide: peerDecide, lanes: 1 },
      { name: 'RateLimiterMemory 200 in flight', decide: peerDecide },
      { name: 'rl acquire 200 in flight', decide: async (k) => allowedOrThrow((await limiter.acquire(k)).allowed) },
    ];
    if (typeof limiter.tryAcquire === 'function') {
      contenders.push({ name: 'rl tryAcquire', sync: true, decide: (k) => allowedOrThrow(limiter.tryAcquire(k, 1).allowed) });
    } else {
      console.log(JSON.stringify({ bench: 'node', phase: 'memory', contender: 'rl tryAcquire', missing: true }));
    }
    emit('memory', await compare(contenders, MEMORY_CALLS, IN_FLIGHT, false));
    store.close();
  }
}

function allowedOrThrow(allowed) {
  if (!allowed) throw new Error('a benchmark request was denied');
}

async function main() {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args.splice(at, 2)[1] ?? '';
  };
  const json = args.includes('--json');
  if (json) args.splice(args.indexOf('--json'), 1);
  const phases = (flag('--phases') ?? 'sequential,inflight,memory').split(',');
  const url = args[0] ?? process.env.RL_TEST_REDIS_URL;
  if (!url) throw new Error('usage: bench.js [--json [--phases LIST]] REDIS_URL (or run under scripts/with-redis)');
  if (json) return harness(url, phases);
  const prefix = `bench${process.pid}`;

  const store = await rl.open(rlUrl(url, prefix));
  const rlLimiter = store.limiter({ algorithm: 'gcra', limit: `${HUGE}/1h`, name: 'bench' });
  const rlTokens = store.limiter({ algorithm: 'token_bucket', limit: `${HUGE}/1h`, name: 'benchtb' });
  // The same algorithm as rate-limiter-flexible's RateLimiterRedis (a counter per fixed window).
  const rlWindow = store.limiter({ algorithm: 'fixed_window', limit: `${HUGE}/1h`, name: 'benchfw' });
  const redis = new Redis(url, { keyPrefix: `${prefix}:` });
  const admin = new Redis(url);
  const flexible = new RateLimiterRedis({ storeClient: redis, points: HUGE, duration: 3600, keyPrefix: 'rlflx' });
  const seedBuckets = new Map(KEYS.map((k) => [k, new SeedTokenBucket(redis, `seed:${k}`, HUGE, HUGE / 3600)]));

  const redisContenders = [
    { name: 'rl (gcra)', decide: async (k) => allowedOrThrow((await rlLimiter.acquire(k)).allowed) },
    { name: 'rl (token_bucket)', decide: async (k) => allowedOrThrow((await rlTokens.acquire(k)).allowed) },
    { name: 'rl (fixed_window)', decide: async (k) => allowedOrThrow((await rlWindow.acquire(k)).allowed) },
    { name: 'rate-limiter-flexible', decide: async (k) => allowedOrThrow((await flexible.consume(k)).remainingPoints >= 0) },
    { name: 'seed ioredis Lua bucket', decide: async (k) => allowedOrThrow(await seedBuckets.get(k).allowRequest()) },
  ];

  console.log(`node ${process.version}, redis at ${url}, ${ROUNDS} rounds each (median shown)`);
  table(`(a) sequential await loop, ${SEQUENTIAL_CALLS} decisions`, await compare(redisContenders, SEQUENTIAL_CALLS, 1, true, admin),
    'rate-limiter-flexible', [p50, p99, perSecond, serverUs]);
  table(`(b) ${IN_FLIGHT} promises in flight, ${IN_FLIGHT_CALLS} decisions`,
    await compare(redisContenders, IN_FLIGHT_CALLS, IN_FLIGHT, true, admin), 'rate-limiter-flexible', [perSecond, p50, p99, serverUs]);

  const memoryStore = await rl.open('memory://');
  const rlMemory = memoryStore.limiter({ algorithm: 'gcra', limit: `${HUGE}/1h`, name: 'bench' });
  const flexibleMemory = new RateLimiterMemory({ points: HUGE, duration: 3600 });
  const memoryContenders = [
    { name: 'rl memory://', decide: async (k) => allowedOrThrow((await rlMemory.acquire(k)).allowed) },
    { name: 'RateLimiterMemory', decide: async (k) => allowedOrThrow((await flexibleMemory.consume(k)).remainingPoints >= 0) },
  ];
  table(`(c) memory, ${IN_FLIGHT} promises in flight, ${MEMORY_CALLS} decisions`,
    await compare(memoryContenders, MEMORY_CALLS, IN_FLIGHT, false), 'RateLimiterMemory', [perSecond]);

  store.close();
  memoryStore.close();
  redis.disconnect();
  admin.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
