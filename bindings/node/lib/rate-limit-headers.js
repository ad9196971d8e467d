'use strict';
// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers):
//   RateLimit-Policy: "api";q=100;w=60            one entry per limit
//   RateLimit: "api";r=42;t=18                    the limit that decided
// and Retry-After (seconds, RFC 9110) on a denial. Seconds are rounded up,
// so a client that waits as told is never early.

const UNIT_SECONDS = {
  us: 1e-6, ms: 1e-3, s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600, d: 86400, day: 86400,
};

// The limits of a limiter's `limit` setting ('10/s, 1000/1h'), which librl
// already validated: [{ quota: 10, windowSeconds: 1 }, ...].
function parseLimits(limitSetting) {
  return limitSetting.split(',').map((item) => {
    const [count, window] = item.split('/').map((part) => part.trim());
    const [, number, unit] = /^(\d*)\s*([a-z]+)$/.exec(window);
    const seconds = Number(number || 1) * UNIT_SECONDS[unit];
    return { quota: Number(count), windowSeconds: Math.max(1, Math.ceil(seconds)) };
  });
}

const ceilSeconds = (ms) => Math.ceil(ms / 1000);

// A header writer for one limiter: call it with each decision.
function rateLimitHeaders(limiter) {
  const name = limiter.settings.name ?? 'default';
  const limits = parseLimits(limiter.settings.limit);
  const policyName = (i) => JSON.stringify(limits.length === 1 ? name : `${name}-${i}`);
  const policy = limits.map((l, i) => `${policyName(i)};q=${l.quota};w=${l.windowSeconds}`).join(', ');

  return function headersFor(decision) {
    const decided = Math.max(0, limits.findIndex((l) => l.quota === decision.limit));
    const headers = {
      'RateLimit-Policy': policy,
      RateLimit: `${policyName(decided)};r=${decision.remaining};t=${ceilSeconds(decision.resetAfterMs)}`,
    };
    if (!decision.allowed && decision.retryAfterMs >= 0) {
      headers['Retry-After'] = String(Math.max(1, ceilSeconds(decision.retryAfterMs)));
    }
    return headers;
  };
}

module.exports = { rateLimitHeaders };
