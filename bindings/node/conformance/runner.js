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

const CASE_FIELDS = new Set(['name', 'limiter', 'clock', 'error', 'message_contains', 'steps']);
const VERBS = new Set(['acquire', 'peek', 'refund', 'reset', 'advance']);
const STEP_MODIFIERS = new Set(['repeat', 'each', 'expect', 'error', 'message_contains', 'allowed_count']);
const REQUEST_FIELDS = new Set(['key', 'key_hex', 'key_len', 'cost']);
const DECISION_FIELDS = new Set([
  'allowed', 'limit', 'remaining', 'retry_after_us', 'reset_after_us', 'limit_index', 'suppression_factor',
]);

// A mistake in a case file, as opposed to a failure of rl.
class BadCase extends Error {}

const isMap = (node) => node !== null && typeof node === 'object' && !Array.isArray(node);

function checkFields(map, known, where) {
  if (!isMap(map)) throw new BadCase(`${where} must be a map`);
  for (const field of Object.keys(map)) {
    if (!known.has(field)) throw new BadCase(`${where}: unknown field '${field}'`);
  }
}

// An int64 scalar: a Number when it is safe, else a BigInt.
function toInt(text, what) {
  if (typeof text !== 'string' || !/^-?\d+$/.test(text)) throw new BadCase(`${what}: '${text}' is not an int64`);
  const value = BigInt(text);
  if (value < -(2n ** 63n) || value >= 2n ** 63n) throw new BadCase(`${what}: '${text}' is not an int64`);
  return Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

// A number (suppression_factor: multiples of 2^-24, exact in a double).
function toNumber(text, what) {
  const value = typeof text === 'string' && text.trim() !== '' ? Number(text) : NaN;
  if (Number.isNaN(value)) throw new BadCase(`${what}: '${text}' is not a number`);
  return value;
}

function toBool(text, what) {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new BadCase(`${what}: '${text}' is not true or false`);
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
  checkFields(expect, DECISION_FIELDS, where);
  const got = formatFields(decision);
  const diffs = [];
  for (const [field, text] of Object.entries(expect)) {
    const want =
      field === 'allowed'
        ? toBool(text, `${where}.allowed`)
        : field === 'suppression_factor'
          ? toNumber(text, `${where}.${field}`)
          : toInt(text, `${where}.${field}`);
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
    if (contains !== undefined) throw new BadCase('message_contains without error');
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
  const given = ['key', 'key_hex', 'key_len'].filter((f) => request[f] !== undefined);
  if (given.length > 1) throw new BadCase(`${where}: give only one of key, key_hex, key_len`);
  if (request.key !== undefined) return request.key;
  if (request.key_hex !== undefined) {
    if (!/^([0-9a-fA-F]{2})*$/.test(request.key_hex)) throw new BadCase(`${where}.key_hex: '${request.key_hex}' is not hex`);
    return Buffer.from(request.key_hex, 'hex');
  }
  if (request.key_len !== undefined) {
    const length = toInt(request.key_len, `${where}.key_len`);
    if (typeof length !== 'number' || length < 0 || length > 2 ** 20) throw new BadCase(`${where}.key_len: out of range`);
    return 'x'.repeat(length);
  }
  return '';
}

function call(store, limiter, verb, args, where) {
  if (verb === 'advance') {
    const delta = toInt(args, where);
    return outcomeOf(async () => store.clock.advance(delta));
  }
  const request = args ?? {};
  checkFields(request, REQUEST_FIELDS, where);
  const key = keyOf(request, where);
  if (verb === 'reset') {
    if (request.cost !== undefined) throw new BadCase(`${where}: reset takes no cost`);
    return outcomeOf(() => limiter.reset(key));
  }
  const cost = request.cost === undefined ? 1 : toInt(request.cost, `${where}.cost`);
  return outcomeOf(() => limiter[verb](key, cost));
}

async function runSteps(store, limiter, steps) {
  if (!Array.isArray(steps)) throw new BadCase('steps must be a list');
  for (const [index, step] of steps.entries()) {
    const number = index + 1;
    if (!isMap(step)) throw new BadCase(`step ${number} must be a map`);
    const verbs = Object.keys(step).filter((f) => VERBS.has(f));
    const unknown = Object.keys(step).find((f) => !VERBS.has(f) && !STEP_MODIFIERS.has(f));
    if (unknown) throw new BadCase(`step ${number}: unknown field '${unknown}'`);
    if (verbs.length !== 1) throw new BadCase(`step ${number}: needs exactly one verb`);
    const verb = verbs[0];
    const where = `step ${number} (${verb})`;
    const repeat = step.repeat === undefined ? 1 : toInt(step.repeat, `${where}.repeat`);
    if (!(repeat >= 1)) throw new BadCase(`${where}.repeat must be at least 1`);
    if (!['acquire', 'peek', 'refund'].includes(verb) && (step.expect || step.each || step.allowed_count)) {
      throw new BadCase(`${where}: ${verb} returns no decision to expect`);
    }
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
  checkFields(testCase, CASE_FIELDS, 'case');
  const opened = await outcomeOf(() => rl.open(url, undefined, openOptions));
  if (opened.error) return `store ${url}: ${opened.error.code}: ${opened.error.message}`;
  const store = opened.value;
  try {
    const start = testCase.clock === undefined ? 0 : toInt(testCase.clock, 'clock');
    store.clock.set(start);
    const setupFails = testCase.error !== undefined;
    if (setupFails && testCase.steps) throw new BadCase('a case with error has no steps');
    if (!setupFails && !testCase.steps) throw new BadCase('a case needs steps or an error');
    if (!isMap(testCase.limiter)) throw new BadCase('limiter must be a map');
    const made = await outcomeOf(async () => store.limiter(testCase.limiter));
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

module.exports = { loadCases, runLoaded, caseUrl, defaultFiles };
