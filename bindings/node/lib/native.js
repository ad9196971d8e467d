'use strict';
// The native layer: rl.h one to one (src/addon.cc lists its exports, each
// named after its rl_* function: limiterAcquire is rl_limiter_acquire),
// initialised for this environment: each worker_thread that loads it gets
// its own addon data. Every other file of lib/ calls rl through it alone,
// and makes every choice the addon does not: sync or async, promises, the
// error class (errorOf below). A build of its own
// (build/Release/rl_native.node: node-gyp, from source) comes first, else the
// package's prebuilt one for this platform (prebuilds/<platform>-<arch>/,
// rl's scripts/build-npm: librl linked in, nothing to install).
const fs = require('fs');
const path = require('path');
const { RlError } = require('./errors');

function addonPath() {
  const built = path.join(__dirname, '..', 'build', 'Release', 'rl_native.node');
  if (fs.existsSync(built)) return built;
  const platform = `${process.platform}-${process.arch}`;
  const prebuilt = path.join(__dirname, '..', 'prebuilds', platform, 'rl_native.node');
  if (fs.existsSync(prebuilt)) return prebuilt;
  const carried = fs.existsSync(path.join(__dirname, '..', 'prebuilds'))
    ? fs.readdirSync(path.join(__dirname, '..', 'prebuilds')).join(', ')
    : 'none';
  throw new Error(
    `@rl/node: no native addon for ${platform} (the package carries prebuilt ones for: ${carried}); ` +
      'build it from source: npm install --build-from-source (needs a C++ compiler and librl-dev)',
  );
}

const native = require(addonPath());
// What a failed call throws (or hands its callback): an RlError whose code
// is the status's name (rl_status_name; a newer librl's unknown one is
// RL_E_INTERNAL).
native.init((status, message) => new RlError(native.statusName(status) ?? 'RL_E_INTERNAL', message));

module.exports = native;
