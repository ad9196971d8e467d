'use strict';
// Child of lifecycle.test.js: uses a store and never closes it.
//   node never-close.js URL INLINE MODE
// MODE 'idle': the last call has finished; the process must end by itself.
// MODE 'exit-in-flight': calls:in flight when process.exit() runs; the
// process must exit cleanly (no crash in the environment's teardown).
const rl = require('../..');

async function main([url, inline, mode]) {
  const store = await rl.open(url, {}, { inline: inline === 'true' });
  const limiter = store.limiter({ limit: '100/s', name: 'neverclose' });
  const first = await limiter.acquire('k');
  if (!first.allowed) throw new Error('the first call was denied');
  if (mode === 'exit-in-flight') {
    for (let i = 0; i < 1000; i++) limiter.acquire(`k${i}`).catch(() => {});
    process.stdout.write('exiting\n');
    process.exit(0);
  }
  process.stdout.write('done\n');
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
