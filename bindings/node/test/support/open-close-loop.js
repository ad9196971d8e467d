'use strict';
// Child of lifecycle.test.js (run with --expose-gc):
//   node --expose-gc open-close-loop.js URL INLINE COUNT
// Opens a store, makes a limiter, acquires once and closes, COUNT times
// after a warm-up of WARMUP rounds, and prints the RSS growth over the
// COUNT rounds in bytes as JSON.
const rl = require('../..');

const WARMUP = 1000;

async function round(url, inline, i) {
  const store = await rl.open(url, {}, { inline });
  const limiter = store.limiter({ limit: '10/s', name: 'loop' });
  const decision = await limiter.acquire(`key-${i % 100}`);
  if (typeof decision.allowed !== 'boolean') throw new Error('no decision');
  store.close();
}

async function rss() {
  // Let finalizers of collected handles run (they are deferred to the loop).
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().rss;
}

async function main([url, inline, countText]) {
  const count = Number(countText);
  for (let i = 0; i < WARMUP; i++) await round(url, inline === 'true', i);
  const before = await rss();
  for (let i = 0; i < count; i++) await round(url, inline === 'true', i);
  const after = await rss();
  process.stdout.write(JSON.stringify({ before, after, growth: after - before }));
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
