#!/usr/bin/env node
'use strict';
// The Node worker of the shared-limit demo (scripts/demo):
//   node examples/node/demo-worker.js URL NAME LIMIT KEY ATTEMPTS
// Opens a store at URL and a gcra limiter named NAME with limit LIMIT,
// prints "ready", waits for the start signal (a line on stdin, or its end),
// makes ATTEMPTS sequential acquire(KEY, 1) calls and prints one line of JSON:
//   {"worker":"node","pid":1234,"admitted":37,"denied":63,
//    "first_call_us":1764133200000000,"last_return_us":1764133200050000,"retry_after_ms":[1200,36000]}
// retry_after_ms is [smallest, largest] over the denials ([] when none);
// the times are wall-clock microseconds. The protocol is in examples/README.md.
// Errors go to stderr with exit code 1.
const rl = require('../../bindings/node');

// Wall-clock microseconds, comparable with the other workers' (C, Go).
const wallClockUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

// Resolves at the start signal: a line on stdin, or its end.
function startSignal() {
  return new Promise((resolve) => {
    const start = () => {
      process.stdin.destroy();
      resolve();
    };
    process.stdin.on('data', (chunk) => chunk.includes(10) && start());
    process.stdin.once('end', start);
    process.stdin.once('error', start);
  });
}

async function main([url, name, limit, key, attemptsText]) {
  const attempts = Number(attemptsText);
  if (!url || !name || !limit || !key || !Number.isSafeInteger(attempts) || attempts < 0) {
    throw new Error('usage: demo-worker.js URL NAME LIMIT KEY ATTEMPTS');
  }
  const store = await rl.open(url);
  try {
    const limiter = store.limiter({ algorithm: 'gcra', name, limit });
    // A peek records nothing: the first round trip happens before "ready".
    await limiter.peek(key, 0);
    process.stdout.write('ready\n');
    await startSignal();
    let admitted = 0;
    let minRetry = Infinity;
    let maxRetry = -Infinity;
    const firstCallUs = wallClockUs();
    for (let i = 0; i < attempts; i++) {
      const { allowed, retryAfterMs } = await limiter.acquire(key, 1);
      if (allowed) {
        admitted++;
      } else {
        minRetry = Math.min(minRetry, retryAfterMs);
        maxRetry = Math.max(maxRetry, retryAfterMs);
      }
    }
    const lastReturnUs = wallClockUs();
    const denied = attempts - admitted;
    const report = {
      worker: 'node',
      pid: process.pid,
      admitted,
      denied,
      first_call_us: firstCallUs,
      last_return_us: lastReturnUs,
      retry_after_ms: denied > 0 ? [Math.round(minRetry), Math.round(maxRetry)] : [],
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    store.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`demo-worker: ${err.code ? `${err.code}: ` : ''}${err.message}\n`);
  process.exitCode = 1;
});
