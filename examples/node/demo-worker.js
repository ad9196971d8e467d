#!/usr/bin/env node
'use strict';
// The Node worker of the shared-limit demo (scripts/demo):
//   node examples/node/demo-worker.js URL NAME LIMIT KEY ATTEMPTS
// Opens a store at URL, a gcra limiter named NAME with limit LIMIT, makes
// ATTEMPTS sequential acquire(KEY, 1) calls and prints one line of JSON:
//   {"worker":"node","pid":1234,"admitted":37,"denied":63,"retry_after_ms":[1200,36000]}
// retry_after_ms is [smallest, largest] over the denials ([] when none).
// Errors go to stderr with exit code 1.
const rl = require('../../bindings/node');

async function main([url, name, limit, key, attemptsText]) {
  const attempts = Number(attemptsText);
  if (!url || !name || !limit || !key || !Number.isSafeInteger(attempts) || attempts < 0) {
    throw new Error('usage: demo-worker.js URL NAME LIMIT KEY ATTEMPTS');
  }
  const store = await rl.open(url);
  try {
    const limiter = store.limiter({ algorithm: 'gcra', name, limit });
    let admitted = 0;
    let minRetry = Infinity;
    let maxRetry = -Infinity;
    for (let i = 0; i < attempts; i++) {
      const { allowed, retryAfterMs } = await limiter.acquire(key, 1);
      if (allowed) {
        admitted++;
      } else {
        minRetry = Math.min(minRetry, retryAfterMs);
        maxRetry = Math.max(maxRetry, retryAfterMs);
      }
    }
    const denied = attempts - admitted;
    const retry = denied > 0 ? [Math.round(minRetry), Math.round(maxRetry)] : [];
    process.stdout.write(
      `${JSON.stringify({ worker: 'node', pid: process.pid, admitted, denied, retry_after_ms: retry })}\n`,
    );
  } finally {
    store.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`demo-worker: ${err.code ? `${err.code}: ` : ''}${err.message}\n`);
  process.exitCode = 1;
});
