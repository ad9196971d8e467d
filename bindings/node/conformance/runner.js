'use strict';
// The conformance runner of the Node binding (format: conformance/README.md
// at the repository root). It drives the cases through the public API
// (rl.open, store.limiter, acquire/peek/refund/reset, store.clock), so what
// it checks is what users get. YAML is read with the failsafe schema: every
// scalar stays the text it was written as, as the format asks.
const fs = require('fs');
const path = require('path');
const YAML = require('yaml');
const rl = require('..');

// The case format (conformance/schema/schema.yaml): every case is checked
// against it before it runs.
const SCHEMA_DIR = path.resolve(__dirname, '..', '..', '..', 'conformance', 'schema');
const SCHEMA = YAML.parse(fs.readFileSync(path.join(SCHEMA_DIR, 'schema.yaml'), 'utf8'), { schema: 'failsafe' });
const { scalars: SCALARS, records: RECORDS } = SCHEMA;

// A mistake in a case file, as opposed to a failure of rl.
class BadCase extends Error {}

const isMap = (node) => node !== null && typeof node === 'object' && !Array.isArray(node);
const isTrue = (spec, attribute) => spec?.[attribute] === 'true';

// value checked against the schema's type, with its defaults filled in.
function check(value, type, where) {
  if (SCALARS[type] !== undefined) {
    if (typeof value !== 'string' || !new RegExp(`^(?:${SCALARS[type]})$`).test(value)) {
      throw new BadCase(`${where}: '${value}' is not ${type === 'int64' ? 'an' : 'a'} ${type}`);
    }
    return value;
  }
  const record = RECORDS[type];
  if (!isMap(value)) throw new BadCase(`${where} must be a map`);
  const fields = record.fields ?? {};
  for (const [field, item] of Object.entries(value)) {
    const spec = fields[field] ?? (record.any_field ? { type: record.any_field } : undefined);
    if (!spec) throw new BadCase(`${where}: unknown field '${field}'`);
    const at = `${where}.${field}`;
    if (isTrue(spec, 'list')) {
      if (!Array.isArray(item)) throw new BadCase(`${at} must be a list`);
      value[field] = item.map((x, i) => check(x, spec.type, `${at}[${i + 1}]`));
    } else {
      value[field] = check(item, spec.type, at);
    }
    if (spec.with && value[spec.with] === undefined) throw new BadCase(`${at} without ${spec.with}`);
  }
  for (const [field, spec] of Object.entries(fields)) {
    if (isTrue(spec, 'required') && value[field] === undefined) throw new BadCase(`${where}: no ${field}`);
  }
  for (const [rule, fits] of [['exactly_one_of', (n) => n === 1], ['at_most_one_of', (n) => n <= 1]]) {
    if (record[rule] && !fits(record[rule].filter((f) => value[f] !== undefined).length)) {
      throw new BadCase(`${where}: ${rule.replaceAll('_', ' ')} ${record[rule].join(', ')}`);
    }
  }
  if (Object.values(fields).some((spec) => isTrue(spec, 'verb'))) {
    const verbs = Object.keys(value).filter((f) => isTrue(fields[f], 'verb'));
    if (verbs.length !== 1) throw new BadCase(`${where}: needs exactly one verb`);
    const checks = Object.keys(value).filter((f) => isTrue(fields[f], 'of_decision'));
    if (checks.length && !isTrue(fields[verbs[0]], 'decides')) {
      throw new BadCase(`${where}: ${verbs[0]} returns no decision for ${checks[0]}`);
    }
  }
  for (const [field, spec] of Object.entries(fields)) {
    if (spec.default !== undefined && value[field] === undefined) value[field] = spec.default;
  }
  return value;
}

const verbOf = (step) => Object.keys(step).find((f) => isTrue(RECORDS.step.fields[f], 'verb'));

// An int64 scalar: a Number when it is safe, else a BigInt.
function toInt(text, what) {
  const value = BigInt(text);
  if (value < -(2n ** 63n) || value >= 2n ** 63n) throw new BadCase(`${what}: '${text}' is not an int64`);
  return Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

// A checked scalar as the value its type names.
function typed(text, type, what) {
  if (type === 'int64') return toInt(text, what);
  if (type === 'number') return Number(text);
  return type === 'bool' ? text === 'true' : text;
}

// A decision as the format names its fields (durations in microseconds).
function formatFields(d) {
  const us = (ms) => (ms < 0 ? -1 : Math.round(ms * 1000));
  return {
    allowed: d.allowed,
    limit: d.limit,
    remaining: d.remaining,
    retry_after_us: us(d.retryAfterMs),
    reset_after_us: us(d.resetAfterMs),
    limit_index: d.limitIndex,
    suppression_factor: d.suppressionFactor,
  };
}

function describe(d) {
  const f = formatFields(d);
  return `{${Object.entries(f).map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
}

// '' when the fields listed in expect match the decision.
function compareDecision(expect, decision, where) {
  const got = formatFields(decision);
  const diffs = [];
  for (const [field, text] of Object.entries(expect)) {
    const want = typed(text, RECORDS.decision.fields[field].type, `${where}.${field}`);
    if (want !== got[field]) diffs.push(`${field}: expected ${want}, got ${got[field]}`);
  }
  return diffs.length === 0 ? '' : `${diffs.join(', ')} in ${describe(decision)}`;
}

// Checks an outcome ({ error } or { value }) against node's error/message_contains.
function compareStatus(node, outcome) {
  const { error, message_contains: contains } = node;
  const failure = outcome.error;
  if (failure !== undefined && !(failure instanceof rl.RlError)) throw failure;
  if (error === undefined) {
    return failure ? `expected success, got ${failure.code}: ${failure.message}` : '';
  }
  if (!failure) return `expected ${error}, got RL_OK`;
  if (failure.code !== error) return `expected ${error}, got ${failure.code}: ${failure.message}`;
  if (contains !== undefined && !failure.message.includes(contains)) {
    return `message '${failure.message}' does not contain '${contains}'`;
  }
  return '';
}

async function outcomeOf(work) {
  try {
    return { value: await work() };
  } catch (error) {
    return { error };
  }
}

function keyOf(request, where) {
  if (request.key !== undefined) return request.key;
  if (request.key_hex !== undefined) return Buffer.from(request.key_hex, 'hex');
  if (request.key_len !== undefined) {
    const length = toInt(request.key_len, `${where}.key_len`);
    if (typeof length !== 'number' || length < 0 || length > 2 ** 20) throw new BadCase(`${where}.key_len: out of range`);
    return 'x'.repeat(length);
  }
  return '';
}

// The store's lease counters (store.stats().leases) by the format's names.
const STATS_FIELDS = {
  leases_taken: 'taken',
  lease_units_leased: 'unitsLeased',
  lease_units_unused: 'unitsUnused',
  lease_units_returned: 'unitsReturned',
  lease_decisions: 'decisions',
};

// '' when the counters listed in want match the store's.
function compareStats(store, want, where) {
  const leases = store.stats().leases;
  const diffs = [];
  for (const [field, text] of Object.entries(want)) {
    const expected = toInt(text, `${where}.${field}`);
    const got = leases[STATS_FIELDS[field]];
    if (expected !== got) diffs.push(`${field}: expected ${expected}, got ${got}`);
  }
  return diffs.length === 0 ? '' : `${where}: ${diffs.join(', ')}`;
}

function call(store, limiter, verb, args, where) {
  if (verb === 'advance') {
    const delta = toInt(args, where);
    return outcomeOf(async () => store.clock.advance(delta));
  }
  const key = keyOf(args, where);
  if (verb === 'reset') return outcomeOf(() => limiter.reset(key));
  const cost = toInt(args.cost, `${where}.cost`);
  return outcomeOf(() => limiter[verb](key, cost));
}

// limiters: one per process of the case, each its own (its own lease state).
async function runSteps(store, limiters, steps) {
  for (const [index, step] of steps.entries()) {
    const verb = verbOf(step);
    const where = `step ${index + 1} (${verb})`;
    const process = toInt(step.process, `${where}.process`);
    if (!(process >= 0 && process < limiters.length)) {
      throw new BadCase(`${where}.process: ${process} is not below processes (${limiters.length})`);
    }
    if (verb === 'stats') {
      const diff = compareStats(store, step.stats, where);
      if (diff) return diff;
      continue;
    }
    const limiter = limiters[process];
    const repeat = toInt(step.repeat, `${where}.repeat`);
    if (!(repeat >= 1)) throw new BadCase(`${where}.repeat must be at least 1`);
    let allowed = 0; // over the repeats, for allowed_count
    for (let i = 1; i <= repeat; i++) {
      const at = repeat === 1 ? where : `${where} #${i} of ${repeat}`;
      const outcome = await call(store, limiter, verb, step[verb], at);
      const statusDiff = compareStatus(step, outcome);
      if (statusDiff) return `${at}: ${statusDiff}`;
      if (outcome.error) continue;
      if (outcome.value?.allowed) allowed++;
      const checks = [step.each && ['each', step.each], i === repeat && step.expect && ['expect', step.expect]];
      for (const [name, expect] of checks.filter(Boolean)) {
        const diff = compareDecision(expect, outcome.value, `${at}.${name}`);
        if (diff) return `${at}: ${diff}`;
      }
    }
    if (step.allowed_count !== undefined) {
      const want = toInt(step.allowed_count, `${where}.allowed_count`);
      if (want !== allowed) return `${where}: allowed_count: expected ${want}, got ${allowed}`;
    }
  }
  return '';
}

// Runs one case on a fresh store at url; '' when it passed, else what differed.
async function runCase(testCase, url, openOptions) {
  check(testCase, 'case', 'case');
  const opened = await outcomeOf(() => rl.open(url, undefined, openOptions));
  if (opened.error) return `store ${url}: ${opened.error.code}: ${opened.error.message}`;
  const store = opened.value;
  try {
    store.clock.set(toInt(testCase.clock, 'clock'));
    const setupFails = testCase.error !== undefined;
    const processes = toInt(testCase.processes, 'processes');
    if (!(processes >= 1 && processes <= 64)) throw new BadCase(`processes: ${processes} is not 1 to 64`);
    const made = await outcomeOf(async () => Array.from({ length: processes }, () => store.limiter(testCase.limiter)));
    const setupDiff = compareStatus(testCase, made);
    if (setupDiff) return `limiter: ${setupDiff}`;
    return setupFails ? '' : await runSteps(store, made.value, testCase.steps);
  } finally {
    store.close();
  }
}

// The URL of the n-th case: clock=manual, and on Redis a key prefix unique
// to the run and the case.
function caseUrl(base, n) {
  let url = `${base}${base.includes('?') ? '&' : '?'}clock=manual`;
  if (base.startsWith('redis')) url += `&prefix=ctnode${process.pid}x${Date.now()}n${n}`;
  return url;
}

// The cases of one file: [{ file, name, testCase, problem }], problem set
// when the file or the case cannot run.
function loadCases(filePath) {
  const file = path.basename(filePath);
  let doc;
  try {
    doc = YAML.parse(fs.readFileSync(filePath, 'utf8'), { schema: 'failsafe' });
  } catch (err) {
    return [{ file, name: '(file)', problem: `cannot read: ${err.message}` }];
  }
  if (!doc || !Array.isArray(doc.cases)) return [{ file, name: '(file)', problem: "no 'cases:' list" }];
  const names = new Set();
  return doc.cases.map((testCase) => {
    const name = isMap(testCase) && typeof testCase.name === 'string' ? testCase.name : '(unnamed)';
    const duplicate = names.has(name);
    names.add(name);
    return { file, name, testCase, problem: duplicate ? 'bad case: the name is used twice in this file' : undefined };
  });
}

// Runs a loaded case; '' when it passed, else the failure.
async function runLoaded({ testCase, problem }, url, openOptions) {
  if (problem) return problem;
  try {
    return await runCase(testCase, url, openOptions);
  } catch (err) {
    if (err instanceof BadCase) return `bad case: ${err.message}`;
    throw err;
  }
}

const defaultFiles = () => {
  const dir = path.resolve(__dirname, '..', '..', '..', 'conformance');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join(dir, f));
};

module.exports = { SCHEMA_DIR, loadCases, runLoaded, caseUrl, defaultFiles };
