'use strict';
// One rate-limited HTTP request, whatever the framework: acquires
// `cost(req)` units of `key(req)` and says what to answer, with librl's
// header fields (docs/http-headers.md). The Express middleware
// (middleware.js) and the Fastify plugin (fastify.js) both answer by it:
//   { outcome: 'allowed' | 'denied', decision, headers }   headers to set
//   { outcome: 'outage' }        a store outage under on_failure=closed: 503
//   { outcome: 'error', err }    anything else: the framework's error path
const native = require('./native');
const { Limiter } = require('./limiter');
const { RlError } = require('./errors');
const { status } = require('./status');
const { rateLimitHeaders } = require('./rate-limit-headers');

const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
const isOutage = (err) => err instanceof RlError && native.statusIsOutage(status[err.code] ?? -1);

// The options both take, checked at setup so that a bad one fails at
// startup, naming it: { limiter, key(req), cost(req) }.
function requestLimiter({ limiter, key, cost = () => 1, ...rest }, what) {
  if (!(limiter instanceof Limiter)) throw new TypeError(`${what}: limiter: must be a limiter from store.limiter()`);
  if (typeof key !== 'function') throw new TypeError(`${what}: key: must be a function of the request`);
  if (typeof cost !== 'function') throw new TypeError(`${what}: cost: must be a function of the request`);
  if ('failOpen' in rest) {
    throw new TypeError(`${what}: failOpen: is the limiter's setting now: store.limiter({ ..., onFailure: 'open' })`);
  }
  const headersFor = rateLimitHeaders(limiter);
  return async function decide(req) {
    let decision;
    try {
      // Awaited only when they return a promise: an await of a plain value
      // is one more trip through the microtask queue per request.
      let k = key(req);
      if (isThenable(k)) k = await k;
      let c = cost(req);
      if (isThenable(c)) c = await c;
      decision = await limiter.acquire(k, c);
    } catch (err) {
      return isOutage(err) ? { outcome: 'outage' } : { outcome: 'error', err };
    }
    let headers;
    try {
      headers = headersFor(decision); // none for fail_open: nothing was counted
    } catch (err) {
      return { outcome: 'error', err };
    }
    return { outcome: decision.allowed ? 'allowed' : 'denied', decision, headers };
  };
}

const tooManyRequests = 'Too Many Requests\n';
const storeUnreachable = 'Service Unavailable: rate limiter store unreachable\n';

module.exports = { requestLimiter, tooManyRequests, storeUnreachable };
