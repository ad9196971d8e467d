'use strict';
// A limiter: one policy (algorithm, limits, name) over a store. Every method
// returns a promise; on a Redis store the work happens on rl's I/O thread
// and the JS thread never waits for the network.
const native = require('./native');
const { RlError } = require('./errors');
const { readLastDecision } = require('./decision');
const { sleep } = require('./sleep');

const { ops } = native;

class Limiter {
  #handle;
  #store;

  /** @internal Use store.limiter(options). */
  constructor(store, handle, settings) {
    this.#store = store;
    this.#handle = handle;
    /** The settings it was made with, as librl strings ({ algorithm: 'gcra', limit: '100/1m', ... }). */
    this.settings = settings;
    /** Its limits as librl parsed them: [{ limit, windowUs, burst }, ...]. */
    this.limits = Object.freeze(native.limits(handle).map(Object.freeze));
    Object.freeze(this);
  }

  get store() {
    return this.#store;
  }

  // A local store answers at once (undefined: the decision is in
  // lastDecision); any other returns a promise of the decision.
  async #call(op, key, cost) {
    const pending = native.call(this.#handle, op, key, cost);
    return pending === undefined ? readLastDecision() : pending;
  }

  /** Decides one request of `cost` units and records it when admitted. */
  acquire(key, cost = 1) {
    return this.#call(ops.acquire, key, cost);
  }

  /** Decides without recording anything (cost 0: the key's state). */
  peek(key, cost = 1) {
    return this.#call(ops.peek, key, cost);
  }

  /** Gives `cost` units back to the key; resolves to its state afterwards. */
  refund(key, cost = 1) {
    return this.#call(ops.refund, key, cost);
  }

  /** Forgets the key: it is back to full capacity. */
  async reset(key) {
    await native.call(this.#handle, ops.reset, key, 0);
  }

  /** Acquires many keys in one round trip; each request is decided on its own. */
  async acquireBatch(requests) {
    return native.batch(this.#handle, requests);
  }

  /**
   * Acquires, and while denied waits the retryAfterMs it was told and tries
   * again, until admitted, until waiting would pass timeoutMs (then the last
   * denial is returned at once, without waiting in vain), or until `signal`
   * aborts (then it rejects with the signal's reason). A denial that can
   * never be admitted (retryAfterMs -1) and any denial on a manual-clock
   * store (whose time never moves by itself) return at once.
   */
  async acquireWait(key, cost = 1, { timeoutMs = Infinity, signal } = {}) {
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs)) {
      throw new TypeError(`timeoutMs: must be a number, not ${typeof timeoutMs}`);
    }
    if (timeoutMs < 0) throw new RlError('RL_E_INVALID_ARG', `timeoutMs: ${timeoutMs} is negative`);
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('signal: must be an AbortSignal');
    }
    signal?.throwIfAborted();
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const decision = await this.acquire(key, cost);
      if (decision.allowed || decision.retryAfterMs < 0 || this.#store.manualClock) return decision;
      if (performance.now() + decision.retryAfterMs > deadline) return decision;
      await sleep(decision.retryAfterMs, signal);
    }
  }
}

module.exports = { Limiter };
