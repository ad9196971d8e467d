'use strict';
// A store: where limiter state lives (memory:// or redis://). Open it with
// rl.open(url); close it when done (or let `await using` do it). A store
// that is never closed does not keep the process alive, and is closed when
// its environment (the process or a worker_thread) ends.
const native = require('./native');
const { Limiter } = require('./limiter');
const { toSettings } = require('./settings');
const { sourceNames } = require('./decision');
const { namesOf } = require('./names');

// rl_breaker_state_name of each state, indexed by its value.
const BREAKER_STATES = namesOf(native.breakerStateName);
const ms = (us) => us / 1000;
const STATUS_NAMES = namesOf(native.statusName);

// rl_store_get_stats, named: counters by source and by status name, times in ms.
function statsOf(raw) {
  const decisions = {};
  sourceNames().forEach((source, i) => (decisions[source] = { allowed: raw.allowed[i], denied: raw.denied[i] }));
  const failures = {};
  STATUS_NAMES.forEach((name, i) => {
    if (i !== 0) failures[name] = raw.failures[i] ?? 0;
  });
  const [p50, p95, p99, max] = raw.roundTripUs;
  const [taken, unitsLeased, unitsUnused, unitsReturned, leaseDecisions] = raw.leases;
  return {
    healthy: raw.breakerState === 0,
    breaker: BREAKER_STATES[raw.breakerState] ?? `state_${raw.breakerState}`,
    breakerOpened: raw.breakerOpened,
    decisions,
    failures,
    roundTrip: { count: raw.roundTrips, p50Ms: ms(p50), p95Ms: ms(p95), p99Ms: ms(p99), maxMs: ms(max) },
    leases: { taken, unitsLeased, unitsUnused, unitsReturned, decisions: leaseDecisions },
  };
}

class Store {
  #handle;
  #closed = false;
  #inline;

  /** @internal Use rl.open(url). */
  constructor(handle, inline) {
    this.#handle = handle;
    const described = native.storeDescribe(handle);
    // Calls answer on the JS thread: asked for, and possible (a store librl
    // describes as in process, memory://, never waits for I/O).
    this.#inline = inline && described.inProcess;
    /**
     * The URL it was opened with in librl's display form: the password and
     * every secret setting (sentinel_password) replaced by '***'.
     */
    this.url = native.storeDisplayUrl(handle);
    /** True when opened with clock=manual: time moves only through `clock`. */
    this.manualClock = described.manualClock;
    /** The URL scheme: 'memory' or 'redis'. */
    this.scheme = described.scheme;
    /** The manual clock, for tests (stores opened with clock=manual only). */
    this.clock = Object.freeze({
      /** Sets the store's time to `us` microseconds (never backwards). */
      set: (us) => native.storeClockSet(this.#handle, us),
      /** Moves the store's time forward by `us` microseconds. */
      advance: (us) => native.storeClockAdvance(this.#handle, us),
    });
  }

  get closed() {
    return this.#closed;
  }

  /** A limiter over this store: { algorithm, limit, burst, name, granularity, hardLimitFactor, factorReuse, seed, ... }. */
  limiter(options) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('options: must be an object such as { limit: "100/1m" }');
    }
    const entries = toSettings(options, 'options');
    const handle = native.limiterNew(this.#handle, entries);
    const settings = {};
    for (let i = 0; i < entries.length; i += 2) settings[entries[i]] = entries[i + 1];
    return new Limiter(this, handle, Object.freeze(settings), this.#inline);
  }

  /**
   * What the store has done since it opened (rl_store_get_stats; works
   * after close): { healthy, breaker: 'closed' | 'open' | 'half_open',
   * breakerOpened, decisions: { store|fail_open|local: { allowed, denied } },
   * failures: { RL_E_TIMEOUT: n, ... }, roundTrip: { count, p50Ms, p95Ms,
   * p99Ms, maxMs }, leases: { taken, unitsLeased, unitsUnused, unitsReturned,
   * decisions } }. Quantiles are within 12.5% (log-linear buckets); leases
   * sum every limiter of the store (lease=auto, docs/algorithms.md).
   */
  stats() {
    return statsOf(native.storeGetStats(this.#handle));
  }

  /**
   * What decides in Redis now (rl_store_describe; works after close):
   * { scriptMode: 'auto' | 'module' | 'functions' | 'scripts', luaMode:
   * 'functions' | 'scripts', moduleNodes, luaNodes }, the nodes counted
   * under scriptMode 'auto' only, as calls reach them; null for memory://.
   */
  decidesWith() {
    return native.storeDescribe(this.#handle).decidesWith;
  }

  /** The same statistics in the Prometheus text format, as librl renders them. */
  metrics() {
    return native.storeMetrics(this.#handle);
  }

  /** True while the store's circuit breaker is closed (always for memory://). */
  isHealthy() {
    return native.storeGetStats(this.#handle).breakerState === 0;
  }

  /**
   * Closes the store: calls in flight reject with RlError RL_E_SHUTDOWN, and
   * so does every later call on its limiters. Idempotent.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    native.storeClose(this.#handle);
  }

  async [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() {
    this.close();
  }
}

/**
 * Opens a store from a URL: 'memory://', 'redis://[user:pass@]host:port[/db]',
 * with ?settings or `settings` ({ timeoutMs: 50, clock: 'manual', ... }).
 * `inline` (default true): a store librl describes as in process (memory://)
 * answers on the JS thread, which it can do without waiting; false sends its calls through rl's I/O thread
 * as a Redis store's are (tests of that path use it).
 */
async function open(url, settings, { inline = true } = {}) {
  if (typeof url !== 'string') throw new TypeError(`url: must be a string, not ${typeof url}`);
  if (typeof inline !== 'boolean') throw new TypeError(`inline: must be a boolean, not ${typeof inline}`);
  const entries = toSettings(settings, 'settings');
  const handle = await new Promise((resolve, reject) => {
    native.storeOpen(url, entries, (err, store) => (err === null ? resolve(store) : reject(err)));
  });
  return new Store(handle, inline);
}

module.exports = { Store, open };
