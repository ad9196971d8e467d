'use strict';
// A worker_thread of lifecycle.test.js: opens its own store (each worker
// has its own addon data and thread-safe functions), acquires `attempts`
// times on one key and posts how many were admitted. With leaveOpen it
// never closes its store and leaves calls in flight when it ends; with flood
// it also keeps making calls until it is terminated, so that answers are
// arriving while the worker's JS stops.
const { parentPort, workerData } = require('node:worker_threads');
const rl = require('../..');

async function main({ url, inline, name, limit, key, attempts, leaveOpen, flood }) {
  const store = await rl.open(url, {}, { inline });
  const limiter = store.limiter({ limit, name });
  let admitted = 0;
  for (let i = 0; i < attempts; i++) {
    if ((await limiter.acquire(key)).allowed) admitted++;
  }
  if (leaveOpen) {
    for (let i = 0; i < 100; i++) limiter.acquire(key).catch(() => {});
    const more = () => {
      for (let i = 0; i < 200; i++) limiter.acquire(`${key}${i}`).catch(() => {});
      setImmediate(more);
    };
    if (flood) more();
  } else {
    store.close();
  }
  parentPort.postMessage({ admitted });
}

main(workerData).catch((err) => {
  parentPort.postMessage({ error: `${err.code ?? ''} ${err.message}` });
});
