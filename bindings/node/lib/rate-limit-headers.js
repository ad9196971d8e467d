'use strict';
// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers):
//   RateLimit-Policy: "api";q=100;w=60            one entry per limit
//   RateLimit: "api";r=42;t=18                    the limit that decided
// and Retry-After (seconds, RFC 9110) on a denial. Seconds are rounded up,
// so a client that waits as told is never early.

const ceilSeconds = (ms) => Math.ceil(ms / 1000);

// A header writer for one limiter: call it with each decision.
function rateLimitHeaders(limiter) {
  const { name } = limiter; // librl's, default included
  const limits = limiter.limits; // as librl parsed them: no second parser here
  const policyName = (i) => JSON.stringify(limits.length === 1 ? name : `${name}-${i}`);
  const windowSeconds = (l) => Math.max(1, Math.ceil(l.windowUs / 1e6));
  const policy = limits.map((l, i) => `${policyName(i)};q=${l.limit};w=${windowSeconds(l)}`).join(', ');

  return function headersFor(decision) {
    const headers = {
      'RateLimit-Policy': policy,
      RateLimit: `${policyName(decision.limitIndex)};r=${decision.remaining};t=${ceilSeconds(decision.resetAfterMs)}`,
    };
    if (!decision.allowed && decision.retryAfterMs >= 0) {
      headers['Retry-After'] = String(Math.max(1, ceilSeconds(decision.retryAfterMs)));
    }
    return headers;
  };
}

module.exports = { rateLimitHeaders };
