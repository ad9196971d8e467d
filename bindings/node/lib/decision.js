'use strict';
// How a decision reaches JS. librl's rl_decision counts microseconds; JS
// gets { allowed, limit, remaining, retryAfterMs, resetAfterMs, limitIndex,
// source, suppressionFactor } in (possibly fractional) milliseconds, with -1
// kept as "never", source naming who decided: 'store', 'fail_open', 'local'
// or 'deny_cache' (rl_source_name; docs/failure.md, docs/algorithms.md), and
// suppressionFactor the share of calls algorithm 'suppressed' suppressed (0
// for the others).
// The native layer hands a decision over as eight numbers, in Native.java's
// order: allowed, limit, remaining, retry_after_us, reset_after_us, source,
// limit_index, suppression_factor: a sync call writes them into
// native.decision, an async one passes them to its callback, a batch gives
// a Float64Array of eight per decision.
const native = require('./native');
const { namesOf } = require('./names');

const FIELDS = 8;
const ms = (us) => (us < 0 ? -1 : us / 1000);

// rl_source values, in order, named by librl (rl_source_name).
let sources;
const sourceNames = () => (sources ??= Object.freeze(namesOf(native.sourceName)));
const sourceOf = (value) => sourceNames()[value] ?? `source_${value}`; // a newer librl's new source

function decisionOf(allowed, limit, remaining, retryAfterUs, resetAfterUs, source, limitIndex, suppressionFactor) {
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

// The decision of the last sync call on this thread's environment.
const last = native.decision;
const readLastDecision = () => decisionOf(last[0], last[1], last[2], last[3], last[4], last[5], last[6], last[7]);

// Decision i of a batch's Float64Array.
const decisionAt = (fields, i) => {
  const f = i * FIELDS;
  return decisionOf(fields[f], fields[f + 1], fields[f + 2], fields[f + 3], fields[f + 4], fields[f + 5], fields[f + 6], fields[f + 7]);
};

// Every decision of a batch's Float64Array.
const decisionsOf = (fields) => Array.from({ length: fields.length / FIELDS }, (_, i) => decisionAt(fields, i));

// A batch's results per request, as Promise.allSettled's.
const settledOf = (fields, statuses, errors) =>
  statuses.map((status, i) => (status === 0 ? { status: 'fulfilled', value: decisionAt(fields, i) } : { status: 'rejected', reason: errors[i] }));

module.exports = { sourceNames, decisionOf, readLastDecision, decisionsOf, settledOf };
