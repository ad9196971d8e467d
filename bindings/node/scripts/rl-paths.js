#!/usr/bin/env node
// Prints what binding.gyp needs of librl, as a space-separated list:
//   include  the folders to add to the include path (none for a system path)
//   libs     the linker flags: -lrl, with -L and an rpath for a folder of its own
// Found, in order: $RL_INCLUDE_DIR / $RL_LIB_DIR when set; the project's own
// header and build (build/capi) when this package sits in rl's checkout; else
// an installed librl (the librl-dev package or `cmake --install`) through
// pkg-config's rl.pc.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const root = path.resolve(__dirname, '..', '..', '..');
const inRepository = fs.existsSync(path.join(root, 'capi', 'include', 'rl', 'rl.h'));

function pkgConfig(flag) {
  try {
    return execFileSync('pkg-config', [flag, 'rl'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    process.stderr.write(
      'rl-paths.js: librl not found: install librl-dev (pkg-config rl) ' +
        'or set RL_INCLUDE_DIR and RL_LIB_DIR\n',
    );
    process.exit(1);
  }
}

function include() {
  if (process.env.RL_INCLUDE_DIR) return path.resolve(process.env.RL_INCLUDE_DIR);
  if (inRepository) return path.join(root, 'capi', 'include');
  // pkg-config leaves out system folders; naming /usr/include would break
  // the C++ library's #include_next.
  return pkgConfig('--cflags-only-I')
    .split(/\s+/)
    .filter(Boolean)
    .map((flag) => flag.replace(/^-I/, ''))
    .join(' ');
}

function libs() {
  const dir = process.env.RL_LIB_DIR || (inRepository ? path.join(root, 'build', 'capi') : null);
  if (dir) {
    const lib = path.resolve(dir);
    return `-L${lib} -lrl -Wl,-rpath,${lib}`;
  }
  return pkgConfig('--libs');
}

const which = { include, libs }[process.argv[2]];
if (!which) {
  process.stderr.write('usage: rl-paths.js include|libs\n');
  process.exit(2);
}
process.stdout.write(which());
