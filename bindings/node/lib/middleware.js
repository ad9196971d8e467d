'use strict';
// Express/Connect middleware: (req, res, next). Acquires `cost(req)` units
// of `key(req)` from the limiter, leaves the decision on req.rateLimit
// (its `source` says who decided: 'store', 'fail_open', 'local'), sets
// RateLimit-Policy and RateLimit, and when denied answers 429 with
// Retry-After itself. The fields are librl's (docs/http-headers.md): the Go
// and Java bindings send the same bytes.
// What a store outage does is the limiter's on_failure setting
// (docs/failure.md): 'open' lets the request through (without RateLimit
// headers: nothing was counted), 'local' decides it in this process, and
// 'closed' (the default) fails with an outage (rl_status_is_outage: a
// timeout, an unreachable store), which the middleware answers 503 Service
// Unavailable, never 429. Every other failure (bad input, a closed store,
// refused credentials) goes to next(err), as Go's rlhttp gives it to
// OnError.
const native = require('./native');
const { Limiter } = require('./limiter');
const { RlError } = require('./errors');
const { status } = require('./status');
const { rateLimitHeaders } = require('./rate-limit-headers');

const clientAddress = (req) => req.ip ?? req.socket?.remoteAddress ?? 'unknown';

const isOutage = (err) => err instanceof RlError && native.isOutage(status[err.code] ?? -1);

function middleware({ limiter, key = clientAddress, cost = () => 1, ...rest } = {}) {
  if (!(limiter instanceof Limiter)) throw new TypeError('limiter: must be a limiter from store.limiter()');
  if (typeof key !== 'function') throw new TypeError('key: must be a function of the request');
  if (typeof cost !== 'function') throw new TypeError('cost: must be a function of the request');
  if ('failOpen' in rest) {
    throw new TypeError("failOpen: is the limiter's setting now: store.limiter({ ..., onFailure: 'open' })");
  }
  const headersFor = rateLimitHeaders(limiter);

  return async function rateLimit(req, res, next) {
    let decision;
    try {
      decision = await limiter.acquire(await key(req), await cost(req));
    } catch (err) {
      if (!isOutage(err)) return next(err);
      res.statusCode = 503;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Service Unavailable: rate limiter store unreachable\n');
      return;
    }
    req.rateLimit = decision;
    let headers;
    try {
      headers = headersFor(decision); // none for fail_open: nothing was counted
    } catch (err) {
      return next(err);
    }
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (decision.allowed) return next();
    res.statusCode = 429;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('Too Many Requests\n');
  };
}

module.exports = { middleware };
