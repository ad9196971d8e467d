'use strict';
// A limiter: one policy (algorithm, limits, name) over a store. Every method
// but tryAcquire returns a promise; on a Redis store the work happens on
// rl's I/O thread and the JS thread never waits for the network.
const native = require('./native');
const { RlError } = require('./errors');
const { decisionOf, readLastDecision, decisionsOf, settledOf } = require('./decision');

// The per-decision functions, read once from the addon's exports (dozens of
// properties): loading one per call showed as a LoadIC in tryAcquire's profile.
const { ops, limiterAcquire, limiterPeek, limiterRefund, limiterCallAsync } = native;
const last = native.decision; // a sync call's decision

// The synchronous rl_* function of each op, for an inline store.
const syncCallOf = { [ops.acquire]: limiterAcquire, [ops.peek]: limiterPeek, [ops.refund]: limiterRefund };

const unsupported = () =>
  new RlError(
    'RL_E_UNSUPPORTED',
    'tryAcquire: only an inline memory:// store decides without waiting; on this store it would block the event loop for a round trip: use acquire()',
  );

// acquire with a callback instead of a promise, for lib's HTTP
// integrations (http-decision.js): limiter[acquireFields](key, cost,
// callback) runs callback(err, ...the decision's fields as the native layer
// gives them, decision.js), with err null on success. A promise per
// request, and the ms the header fields would convert back to us, less.
const acquireFields = Symbol('rl.acquireFields');

// A duration option in ms as librl's microseconds (undefined stays so).
// Infinity is `infinite`; librl checks nothing else it could name as timeoutMs.
function microseconds(ms, what, infinite) {
  if (ms === undefined) return undefined;
  if (typeof ms !== 'number' || Number.isNaN(ms)) throw new TypeError(`${what}: must be a number, not ${typeof ms}`);
  if (ms < 0) throw new RlError('RL_E_INVALID_ARG', `${what}: ${ms} is negative`);
  return ms === Infinity ? infinite : Math.min(Math.floor(ms * 1000), Number.MAX_SAFE_INTEGER);
}

// A request's own deadline ({ timeoutMs }): librl's rl_request.timeout_us.
const requestTimeoutUs = (options) => {
  if (options === null || typeof options !== 'object') throw new TypeError('options: must be an object such as { timeoutMs: 50 }');
  return microseconds(options.timeoutMs, 'timeoutMs', 0);
};

class Limiter {
  #handle;
  #store;
  // Its store answers on the JS thread (an inline memory:// store): every
  // call is librl's sync one; else its async one, completed on rl's thread.
  #inline;

  /** @internal Use store.limiter(options). */
  constructor(store, handle, settings, inline) {
    this.#store = store;
    this.#handle = handle;
    this.#inline = inline;
    /** The settings it was made with, as librl strings ({ algorithm: 'gcra', limit: '100/1m', ... }). */
    this.settings = settings;
    /** Its limits as librl parsed them: [{ limit, windowUs, burst }, ...]. */
    this.limits = Object.freeze(native.limiterLimits(handle).map(Object.freeze));
    /** Its name as librl holds it ('default' when the name setting was not given). */
    this.name = native.limiterName(handle);
    Object.freeze(this);
  }

  get store() {
    return this.#store;
  }

  // One op on one key: answered at once on an inline store, else a
  // promise that rl's completion settles (a sync throw rejects it).
  #call(op, key, cost, options) {
    if (this.#inline) return this.#callInline(op, key, cost, options);
    return new Promise((resolve, reject) => {
      limiterCallAsync(this.#handle, op, key, cost, requestTimeoutUs(options) ?? 0, (err, a, l, r, ra, re, s, li, sf) =>
        err === null ? resolve(decisionOf(a, l, r, ra, re, s, li, sf)) : reject(err),
      );
    });
  }

  async #callInline(op, key, cost, options) {
    syncCallOf[op](this.#handle, key, cost, requestTimeoutUs(options) ?? 0);
    return readLastDecision();
  }

  /**
   * Decides one request of `cost` units and records it when admitted.
   * `timeoutMs` (every call takes it): this call's deadline at the store,
   * when shorter than the store's timeoutMs (RlError RL_E_TIMEOUT).
   */
  acquire(key, cost = 1, options = {}) {
    return this.#call(ops.acquire, key, cost, options);
  }

  /**
   * acquire without a promise, for an in-process store (memory://, opened
   * inline): the decision is returned at once, at the cost of a function
   * call. On any other store it throws RlError RL_E_UNSUPPORTED: a
   * synchronous round trip would block the event loop.
   */
  tryAcquire(key, cost = 1) {
    if (!this.#inline) throw this.#store.closed ? new RlError('RL_E_SHUTDOWN', 'store: closed') : unsupported();
    limiterAcquire(this.#handle, key, cost);
    return readLastDecision();
  }

  /** @internal See acquireFields above. Never throws: a failure is the callback's. */
  [acquireFields](key, cost, callback) {
    if (!this.#inline) {
      try {
        limiterCallAsync(this.#handle, ops.acquire, key, cost, 0, callback);
      } catch (err) {
        callback(err);
      }
      return;
    }
    try {
      limiterAcquire(this.#handle, key, cost);
    } catch (err) {
      callback(err);
      return;
    }
    callback(null, last[0], last[1], last[2], last[3], last[4], last[5], last[6], last[7]);
  }

  /** Decides without recording anything (cost 0: the key's state). */
  peek(key, cost = 1, options = {}) {
    return this.#call(ops.peek, key, cost, options);
  }

  /** Gives `cost` units back to the key; resolves to its state afterwards. */
  refund(key, cost = 1, options = {}) {
    return this.#call(ops.refund, key, cost, options);
  }

  /** Forgets the key: it is back to full capacity. */
  async reset(key, options = {}) {
    const timeoutUs = requestTimeoutUs(options) ?? 0;
    if (this.#inline) return native.limiterReset(this.#handle, key);
    await new Promise((resolve, reject) => {
      limiterCallAsync(this.#handle, ops.reset, key, 0, timeoutUs, (err) => (err === null ? resolve() : reject(err)));
    });
  }

  /**
   * Acquires many keys in one round trip; each request is decided on its
   * own. Any request's failure rejects the whole call with it: see
   * acquireBatchSettled for a result per request.
   */
  async acquireBatch(requests) {
    if (this.#inline) return decisionsOf(native.limiterAcquireBatch(this.#handle, requests));
    return new Promise((resolve, reject) => {
      native.limiterAcquireBatchAsync(this.#handle, requests, (err, fields) => (err === null ? resolve(decisionsOf(fields)) : reject(err)));
    });
  }

  /**
   * acquireBatch with a result per request, shaped as Promise.allSettled's:
   * { status: 'fulfilled', value: decision } or { status: 'rejected',
   * reason: RlError }, in request order (librl's
   * rl_limiter_acquire_batch_each). It rejects only for the call itself: a
   * malformed batch (nothing decided, the message names the request's
   * index) or a closed store. On one Redis node an outage fails every
   * request alike; with Redis Cluster one node can fail while the others
   * answer.
   */
  async acquireBatchSettled(requests) {
    if (this.#inline) return settledOf(...native.limiterAcquireBatchEach(this.#handle, requests));
    return new Promise((resolve) => {
      native.limiterAcquireBatchEachAsync(this.#handle, requests, (fields, statuses, errors) => resolve(settledOf(fields, statuses, errors)));
    });
  }

  /**
   * Acquires, and while denied waits the retryAfterMs it was told and tries
   * again (librl's rl_limiter_acquire_wait_start: a timer on rl's thread),
   * until admitted, until waiting would pass timeoutMs (then the last
   * denial is returned at once, without waiting in vain), or until `signal`
   * aborts (then it rejects with the signal's reason; librl ends the wait
   * and refunds an admission it made, once). A denial that can
   * never be admitted (retryAfterMs -1) and any denial on a manual-clock
   * store (whose time never moves by itself) return at once.
   */
  async acquireWait(key, cost = 1, { timeoutMs = Infinity, signal } = {}) {
    const waitUs = microseconds(timeoutMs, 'timeoutMs', Number.MAX_SAFE_INTEGER);
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('signal: must be an AbortSignal');
    }
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      let onAbort;
      const wait = native.limiterAcquireWaitStart(this.#handle, key, cost, 0, waitUs, (err, a, l, r, ra, re, s, li, sf) => {
        if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
        // Either is a no-op once aborted: librl refunded an admission.
        if (err === null) resolve(decisionOf(a, l, r, ra, re, s, li, sf));
        else reject(err);
      });
      if (signal === undefined) return;
      onAbort = () => {
        native.waitCancel(wait); // librl ends it and refunds an admission
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

module.exports = { Limiter, acquireFields };
