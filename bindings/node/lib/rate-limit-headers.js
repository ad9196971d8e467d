'use strict';
// The HTTP header fields of a limiter's decisions: RateLimit-Policy and
// RateLimit (IETF draft "RateLimit header fields for HTTP") and Retry-After
// on a denial that can be retried. librl renders them (rl_headers_render,
// docs/http-headers.md), so the Node, Go and Java middlewares send the same
// bytes for the same decision; this file only maps the call.
const native = require('./native');
const { sourceNames } = require('./decision');
const { namesOf } = require('./names');

let names;
const headerNames = () => (names ??= namesOf(native.headerName)); // rl_header_name, by rl_header

// A decision's milliseconds as librl's microseconds (-1 stays "never").
const us = (ms) => (ms < 0 ? -1 : Math.round(ms * 1000));

// A header writer for one limiter ({ name, limits: [{ limit, windowUs }] },
// as librl parsed them): call it with each decision; it returns
// { field: value } of the fields to send (none for a fail-open decision,
// which counted nothing). A decision no limiter of these limits could make
// (a limitIndex beyond them) throws an RlError (RL_E_INVALID_ARG).
function rateLimitHeaders(limiter) {
  const { name, limits } = limiter;
  return function headersFor(decision) {
    const values = native.headersRender(
      name,
      limits,
      decision.allowed,
      decision.remaining,
      us(decision.retryAfterMs),
      us(decision.resetAfterMs),
      decision.limitIndex,
      sourceNames().indexOf(decision.source),
    );
    const headers = {};
    values.forEach((value, header) => {
      if (value !== null) headers[headerNames()[header]] = value;
    });
    return headers;
  };
}

module.exports = { rateLimitHeaders };
