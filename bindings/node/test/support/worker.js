'use strict';
// A worker_thread of lifecycle.test.js: opens its own store (each worker
// has its own addon data and thread-safe functions), acquires `attempts`
// times on one key and posts how many were admitted. With leaveOpen it
// never closes its store and leaves calls in flight when it ends.
const { parentPort, workerData } = require('node:worker_threads');
const rl = require('../..');

async function main({ url, inline, name, limit, key, attempts, leaveOpen }) {
  const store = await rl.open(url, {}, { inline });
  const limiter = store.limiter({ limit, name });
  let admitted = 0;
  for (let i = 0; i < attempts; i++) {
    if ((await limiter.acquire(key)).allowed) admitted++;
  }
  if (leaveOpen) {
    for (let i = 0; i < 100; i++) limiter.acquire(key).catch(() => {});
  } else {
    store.close();
  }
  parentPort.postMessage({ admitted });
}

main(workerData).catch((err) => {
  parentPort.postMessage({ error: `${err.code ?? ''} ${err.message}` });
});
