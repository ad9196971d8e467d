'use strict';
// How a decision reaches JS. librl's rl_decision counts microseconds; JS
// gets { allowed, limit, remaining, retryAfterMs, resetAfterMs, limitIndex }
// in (possibly fractional) milliseconds, with -1 kept as "never".
// The native layer never builds these objects itself (property by
// property through N-API, that costs more than the decision): a sync call
// writes the six numbers into `lastDecision`, and an async completion
// calls decisionOf.

const ms = (us) => (us < 0 ? -1 : us / 1000);

function decisionOf(allowed, limit, remaining, retryAfterUs, resetAfterUs, limitIndex) {
  return { allowed: allowed !== 0, limit, remaining, retryAfterMs: ms(retryAfterUs), resetAfterMs: ms(resetAfterUs), limitIndex };
}

// [allowed, limit, remaining, retry_after_us, reset_after_us, limit_index]
// of the last sync call on this thread's environment.
const lastDecision = new Float64Array(6);

const readLastDecision = () =>
  decisionOf(lastDecision[0], lastDecision[1], lastDecision[2], lastDecision[3], lastDecision[4], lastDecision[5]);

module.exports = { decisionOf, lastDecision, readLastDecision };
