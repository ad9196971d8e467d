'use strict';
// How a decision reaches JS. librl's rl_decision counts microseconds; JS
// gets { allowed, limit, remaining, retryAfterMs, resetAfterMs, limitIndex,
// source, suppressionFactor } in (possibly fractional) milliseconds, with -1
// kept as "never", source naming who decided: 'store', 'fail_open', 'local'
// or 'deny_cache' (rl_source_name; docs/failure.md, docs/algorithms.md), and
// suppressionFactor the share of calls algorithm 'suppressed' suppressed (0
// for the others).
// The native layer never builds these objects itself (property by
// property through N-API, that costs more than the decision): a sync call
// writes the eight numbers into `lastDecision`, and an async completion
// calls decisionOf.

const ms = (us) => (us < 0 ? -1 : us / 1000);

// rl_source values, in order, named by librl (rl_source_name); read at the
// first decision, since the addon is loaded after this file (native.js).
let sources;
const sourceNames = () => (sources ??= Object.freeze(require('./native').sourceNames()));
const sourceOf = (value) => sourceNames()[value] ?? `source_${value}`; // a newer librl's new source

function decisionOf(allowed, limit, remaining, retryAfterUs, resetAfterUs, limitIndex, source, suppressionFactor) {
  return {
    allowed: allowed !== 0,
    limit,
    remaining,
    retryAfterMs: ms(retryAfterUs),
    resetAfterMs: ms(resetAfterUs),
    limitIndex,
    source: sourceOf(source),
    suppressionFactor,
  };
}

// [allowed, limit, remaining, retry_after_us, reset_after_us, limit_index,
// source, suppression_factor] of the last sync call on this thread's environment.
const lastDecision = new Float64Array(8);

const readLastDecision = () =>
  decisionOf(lastDecision[0], lastDecision[1], lastDecision[2], lastDecision[3], lastDecision[4], lastDecision[5], lastDecision[6], lastDecision[7]);

module.exports = { sourceNames, decisionOf, lastDecision, readLastDecision };
