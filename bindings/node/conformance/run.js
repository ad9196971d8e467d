#!/usr/bin/env node
'use strict';
// Runs the conformance cases through the Node binding and prints one line
// per case and a final "N passed, N failed"; exits non-zero on any failure.
//   node conformance/run.js [--url URL] [--via-io-thread] [file.yaml...]
// URL defaults to memory://; files default to <repo>/conformance/*.yaml.
// --via-io-thread sends memory:// calls through rl's I/O thread and the
// store's thread-safe function (the path Redis calls take).
const { loadCases, runLoaded, caseUrl, defaultFiles } = require('./runner');

async function main(argv) {
  let url = 'memory://';
  let inline = true;
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--url') url = argv[++i];
    else if (argv[i].startsWith('--url=')) url = argv[i].slice(6);
    else if (argv[i] === '--via-io-thread') inline = false;
    else if (argv[i].startsWith('-')) {
      process.stderr.write('usage: run.js [--url URL] [--via-io-thread] [file.yaml...]\n');
      return 2;
    } else files.push(argv[i]);
  }
  let passed = 0;
  let failed = 0;
  for (const file of files.length ? files : defaultFiles()) {
    for (const loaded of loadCases(file)) {
      const failure = await runLoaded(loaded, caseUrl(url, passed + failed), { inline });
      if (failure) failed++;
      else passed++;
      console.log(failure ? `FAIL ${loaded.file}: ${loaded.name}: ${failure}` : `ok   ${loaded.file}: ${loaded.name}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
