'use strict';
// Express/Connect middleware: (req, res, next). Acquires `cost(req)` units
// of `key(req)` from the limiter, leaves the decision on req.rateLimit
// (its `source` says who decided: 'store', 'fail_open', 'local'), sets
// RateLimit-Policy and RateLimit, and when denied answers 429 with
// Retry-After itself. The fields are librl's (docs/http-headers.md): the Go
// and Java bindings, and the Fastify plugin, send the same bytes.
// What a store outage does is the limiter's on_failure setting
// (docs/failure.md): 'open' lets the request through (without RateLimit
// headers: nothing was counted), 'local' decides it in this process, and
// 'closed' (the default) fails with an outage (rl_status_is_outage: a
// timeout, an unreachable store), which the middleware answers 503 Service
// Unavailable, never 429. Every other failure (bad input, a closed store,
// refused credentials) goes to next(err), as Go's rlhttp gives it to
// OnError.
const { requestLimiter, setFields, tooManyRequests, storeUnreachable } = require('./http-decision');

const clientAddress = (req) => req.ip ?? req.socket?.remoteAddress ?? 'unknown';
const setHeader = (res, name, value) => res.setHeader(name, value);

function middleware({ key = clientAddress, ...options } = {}) {
  const decide = requestLimiter({ key, ...options }, 'middleware');
  // Settles once it has answered or called next, and rejects when next
  // throws, as an async function would (a caller may await it).
  return function rateLimit(req, res, next) {
    return new Promise((resolve, reject) => {
      decide(req, (outcome, decision, fields, err) => {
        try {
          answer(req, res, next, outcome, decision, fields, err);
          resolve();
        } catch (thrown) {
          reject(thrown);
        }
      });
    });
  };
}

function answer(req, res, next, outcome, decision, fields, err) {
  if (outcome === 'error') return next(err);
  if (outcome === 'outage') {
    res.statusCode = 503;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(storeUnreachable);
    return;
  }
  req.rateLimit = decision;
  setFields(fields, res, setHeader);
  if (outcome === 'allowed') return next();
  res.statusCode = 429;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(tooManyRequests);
}

module.exports = { middleware };
