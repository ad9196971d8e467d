#!/usr/bin/env node
// Prints where librl (`lib`) or rl.h's folder (`include`) is, for binding.gyp:
// $RL_LIB_DIR / $RL_INCLUDE_DIR when set, else the project's own build.
'use strict';
const path = require('path');

const root = path.resolve(__dirname, '..', '..', '..');
const which = process.argv[2];
const dirs = {
  lib: process.env.RL_LIB_DIR || path.join(root, 'build', 'capi'),
  include: process.env.RL_INCLUDE_DIR || path.join(root, 'capi', 'include'),
};
if (!(which in dirs)) {
  process.stderr.write('usage: rl-paths.js lib|include\n');
  process.exit(2);
}
process.stdout.write(path.resolve(dirs[which]));
