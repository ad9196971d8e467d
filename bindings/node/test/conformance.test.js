'use strict';
// Every conformance case (conformance/*.yaml) on every store: memory://,
// memory:// through rl's I/O thread, and Redis when RL_TEST_REDIS_URL is set.
// Each case is one subtest (one line of output); a summary line per store
// ends in "N passed, N failed".
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { SCHEMA_DIR, loadCases, runLoaded, caseUrl, defaultFiles } = require('../conformance/runner');
const { storeConfigs, noRedis } = require('./support/stores');

const cases = defaultFiles().flatMap(loadCases);

test('the conformance suite has cases', () => {
  assert.ok(cases.length > 0, 'no case found in conformance/*.yaml');
});

if (noRedis) test('conformance on redis', { skip: noRedis });

for (const config of storeConfigs) {
  test(`conformance on ${config.label}`, async (t) => {
    let passed = 0;
    let failed = 0;
    for (const [n, loaded] of cases.entries()) {
      const failure = await runLoaded(loaded, caseUrl(config.url, n), { inline: config.inline });
      if (failure) failed++;
      else passed++;
      await t.test(`${loaded.file}: ${loaded.name}`, () => assert.equal(failure, '', failure));
    }
    t.diagnostic(`conformance on ${config.label}: ${passed} passed, ${failed} failed`);
  });
}

// conformance/schema/unknown_fields.yaml: each case is refused before it
// runs, naming the field the schema does not know.
test('a case with a field the schema does not know is refused', async (t) => {
  for (const loaded of loadCases(path.join(SCHEMA_DIR, 'unknown_fields.yaml'))) {
    const failure = await runLoaded(loaded, caseUrl('memory://', 0), { inline: true });
    await t.test(`${loaded.file}: ${loaded.name}`, () =>
      assert.match(failure, /^bad case: .*unknown field 'bogus_/, `${loaded.file}: ${loaded.name}: ${failure}`),
    );
  }
});
