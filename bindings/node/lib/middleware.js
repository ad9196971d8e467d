'use strict';
// Express/Connect middleware: (req, res, next). Acquires `cost(req)` units
// of `key(req)` from the limiter, sets RateLimit-Policy and RateLimit on
// every answer, and when denied answers 429 with Retry-After itself.
// A limiter failure (Redis down) goes to next(err), or is let through
// without headers when failOpen is true.
const { Limiter } = require('./limiter');
const { rateLimitHeaders } = require('./rate-limit-headers');

const clientAddress = (req) => req.ip ?? req.socket?.remoteAddress ?? 'unknown';

function middleware({ limiter, key = clientAddress, cost = () => 1, failOpen = false } = {}) {
  if (!(limiter instanceof Limiter)) throw new TypeError('limiter: must be a limiter from store.limiter()');
  if (typeof key !== 'function') throw new TypeError('key: must be a function of the request');
  if (typeof cost !== 'function') throw new TypeError('cost: must be a function of the request');
  const headersFor = rateLimitHeaders(limiter);

  return async function rateLimit(req, res, next) {
    let decision;
    try {
      decision = await limiter.acquire(await key(req), await cost(req));
    } catch (err) {
      return failOpen ? next() : next(err);
    }
    for (const [name, value] of Object.entries(headersFor(decision))) res.setHeader(name, value);
    if (decision.allowed) return next();
    res.statusCode = 429;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('Too Many Requests\n');
  };
}

module.exports = { middleware };
