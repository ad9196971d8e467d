'use strict';
// lib/settings.d.ts is what scripts/gen-settings-types.js makes from librl's
// settings table now: a setting added, renamed, retyped or redescribed in
// the core fails here until the types are generated again.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const native = require('../lib/native');
const { toSettings } = require('../lib/settings');
const { generate, target } = require('../scripts/gen-settings-types');

test('lib/settings.d.ts is generated from librl as it is', () => {
  assert.strictEqual(
    fs.readFileSync(target, 'utf8'),
    generate(native),
    'lib/settings.d.ts differs from librl: run node scripts/gen-settings-types.js',
  );
});

test('every typed name reaches librl as its setting', () => {
  for (let i = 0; ; i++) {
    let s;
    try {
      s = native.settingDescribe(i);
    } catch (e) {
      assert.match(e.message, /past the last setting/);
      assert.ok(i >= 30, `only ${i} settings`);
      break;
    }
    const camel = s.name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
    assert.deepStrictEqual(toSettings({ [camel]: 'x' }, 'options')[0], s.name);
  }
});

test('booleans are passed as true and false', () => {
  assert.deepStrictEqual(toSettings({ tlsInsecureSkipVerify: true }, 'options'), ['tls_insecure_skip_verify', 'true']);
});
