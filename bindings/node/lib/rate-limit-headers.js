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
const headerNames = () => (names ??= Object.freeze(namesOf(native.headerName))); // rl_header_name, by rl_header
// The same in lower case: what Fastify's reply.header keeps (and sends) a
// name as, so that it lowers nothing per request.
let lowerNames;
const lowerCaseHeaderNames = () => (lowerNames ??= Object.freeze(headerNames().map((name) => name.toLowerCase())));

// A decision's milliseconds as librl's microseconds (-1 stays "never").
const us = (ms) => (ms < 0 ? -1 : Math.round(ms * 1000));

// librl's renderer for one limiter ({ name, limits: [{ limit, windowUs }] },
// as librl parsed them), its name and limits handed to C once. Called with
// a decision's fields as the native layer gives them (decision.js: allowed,
// limit, remaining, retry_after_us, reset_after_us, source, limit_index,
// suppression_factor), it returns the field values indexed by rl_header,
// null where not sent, or null when none is (a fail-open decision counted
// nothing). A decision no limiter of these limits could make (a limitIndex
// beyond them) throws an RlError (RL_E_INVALID_ARG).
function fieldRenderer({ name, limits }) {
  const renderer = native.headerRendererNew(name, limits);
  const fields = native.decision; // what headerRendererRender reads
  // The RateLimit-Policy value the renderer last returned: it returns it
  // again only when it changes (it depends on the name and limits alone).
  let policy = null;
  return function render(allowed, limit, remaining, retryAfterUs, resetAfterUs, source, limitIndex) {
    fields[0] = allowed;
    fields[1] = limit;
    fields[2] = remaining;
    fields[3] = retryAfterUs;
    fields[4] = resetAfterUs;
    fields[5] = source;
    fields[6] = limitIndex;
    const values = native.headerRendererRender(renderer);
    if (values === null) return null;
    if (typeof values === 'string') return [policy, values, null]; // an admission: RateLimit alone
    if (values[0] !== undefined) policy = values[0];
    return [policy, values[1], values[2]];
  };
}

// rateLimitHeaders(limiter)(decision) -> { field: value }: the fields of a
// decision as JS has it (lib/decision.js), none for fail_open.
function rateLimitHeaders(limiter) {
  const render = fieldRenderer(limiter);
  return function headersFor(decision) {
    const values = render(
      decision.allowed ? 1 : 0,
      decision.limit,
      decision.remaining,
      us(decision.retryAfterMs),
      us(decision.resetAfterMs),
      sourceNames().indexOf(decision.source),
      decision.limitIndex,
    );
    const headers = {};
    values?.forEach((value, header) => {
      if (value !== null) headers[headerNames()[header]] = value;
    });
    return headers;
  };
}

module.exports = { fieldRenderer, headerNames, lowerCaseHeaderNames, rateLimitHeaders };
