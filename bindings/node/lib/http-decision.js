'use strict';
// One rate-limited HTTP request, whatever the framework: acquires
// `cost(req)` units of `key(req)` and says what to answer, with librl's
// header fields (docs/http-headers.md). The Express middleware
// (middleware.js) and the Fastify plugin (fastify.js) both answer by it:
//   decide(req, answer) calls answer(outcome, decision, fields, err) once:
//   'allowed' | 'denied'   decision, and fields: setFields sets them
//   'outage'               a store outage under on_failure=closed: 503
//   'error'                err: anything else, for the framework's error path
// A request is callbacks from the store's completion to the answer: no
// promise (one unless key or cost returns one) and no object but the
// decision (request.rateLimit) and the field values.
const native = require('./native');
const { Limiter, acquireFields } = require('./limiter');
const { RlError } = require('./errors');
const { status } = require('./status');
const { decisionOf } = require('./decision');
const { fieldRenderer, headerNames } = require('./rate-limit-headers');

const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
const isOutage = (err) => err instanceof RlError && native.statusIsOutage(status[err.code] ?? -1);
const one = () => 1;

// set(target, name, value) for each field of fields (none for fail_open:
// nothing was counted), named by names (headerNames() by default).
function setFields(fields, target, set, names = headerNames()) {
  if (fields === null) return;
  for (let i = 0; i < fields.length; i++) if (fields[i] !== null) set(target, names[i], fields[i]);
}

// The options both take, checked at setup so that a bad one fails at
// startup, naming it: { limiter, key(req), cost(req) }.
function requestLimiter({ limiter, key, cost = one, ...rest }, what) {
  if (!(limiter instanceof Limiter)) throw new TypeError(`${what}: limiter: must be a limiter from store.limiter()`);
  if (typeof key !== 'function') throw new TypeError(`${what}: key: must be a function of the request`);
  if (typeof cost !== 'function') throw new TypeError(`${what}: cost: must be a function of the request`);
  if ('failOpen' in rest) {
    throw new TypeError(`${what}: failOpen: is the limiter's setting now: store.limiter({ ..., onFailure: 'open' })`);
  }
  const render = fieldRenderer(limiter);

  function acquire(k, c, answer) {
    // A cost of undefined is acquire()'s default, 1.
    limiter[acquireFields](k, c === undefined ? 1 : c, (err, allowed, limit, remaining, retryAfterUs, resetAfterUs, source, limitIndex, suppression) => {
      if (err !== null) {
        if (isOutage(err)) answer('outage');
        else answer('error', undefined, undefined, err);
        return;
      }
      let fields;
      try {
        fields = render(allowed, limit, remaining, retryAfterUs, resetAfterUs, source, limitIndex);
      } catch (renderErr) {
        answer('error', undefined, undefined, renderErr);
        return;
      }
      const decision = decisionOf(allowed, limit, remaining, retryAfterUs, resetAfterUs, source, limitIndex, suppression);
      answer(allowed !== 0 ? 'allowed' : 'denied', decision, fields);
    });
  }

  // key or cost returned a promise: awaited, key's before cost is asked.
  async function acquireAwaiting(req, k, c, answer) {
    try {
      k = await k;
      if (c === undefined) c = cost(req);
      c = await c;
    } catch (err) {
      answer('error', undefined, undefined, err);
      return;
    }
    acquire(k, c, answer);
  }

  return function decide(req, answer) {
    let k;
    let c;
    try {
      k = key(req);
      if (isThenable(k)) return void acquireAwaiting(req, k, undefined, answer);
      c = cost(req);
    } catch (err) {
      return void answer('error', undefined, undefined, err);
    }
    if (isThenable(c)) return void acquireAwaiting(req, k, c, answer);
    acquire(k, c, answer);
  };
}

const tooManyRequests = 'Too Many Requests\n';
const storeUnreachable = 'Service Unavailable: rate limiter store unreachable\n';

module.exports = { requestLimiter, setFields, tooManyRequests, storeUnreachable };
