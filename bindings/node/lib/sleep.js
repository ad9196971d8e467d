'use strict';
// An abortable sleep for acquireWait: resolves after ms, or rejects with the
// signal's reason as soon as the signal aborts.

// setTimeout cannot wait longer than this; longer waits loop in acquireWait.
const MAX_TIMER_MS = 2 ** 31 - 1;

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

module.exports = { sleep };
