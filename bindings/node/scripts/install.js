#!/usr/bin/env node
// npm's install step: nothing to build when the package carries a prebuilt
// addon for this platform (prebuilds/<platform>-<arch>/rl_native.node, made
// by rl's scripts/build-npm), else `node-gyp rebuild` against librl.
// `npm install --build-from-source` (or npm_config_build_from_source=true)
// builds anyway.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const prebuilt = path.join(__dirname, '..', 'prebuilds', `${process.platform}-${process.arch}`, 'rl_native.node');
const fromSource = ['true', '1'].includes(String(process.env.npm_config_build_from_source || ''));
if (!fromSource && fs.existsSync(prebuilt)) {
  process.exit(0);
}
const gyp = spawnSync('node-gyp', ['rebuild'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(gyp.status === null ? 1 : gyp.status);
