#!/usr/bin/env bash
# Builds redis-cell (a Redis module: GCRA in one command, CL.THROTTLE), a
# peer of rl's module in bench/run, from its crate on the Rust registry,
# and prints the path of the module it built. Nothing of it is kept in the
# repository: a throwaway cargo project in BUILD_DIR/redis-cell downloads
# the crate's source (cargo vendor), and cargo builds it there.
#   bench/redis/redis-cell.sh [BUILD_DIR]
# Exits non-zero with the reason on stderr when the crate cannot be had or
# built (bench/run's redis-cell rows then say why).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${RL_BUILD_DIR:-$root/build}}
# The registry's newest version (0.2.2, 2018; later ones are not published).
version=0.2.2
work=$build/redis-cell
module=$work/redis-cell-$version/target/release/libredis_cell.so
if [ -f "$module" ]; then
  echo "$module"
  exit 0
fi
command -v cargo >/dev/null || { echo "redis-cell.sh: cargo not found (rustup installs it)" >&2; exit 1; }
mkdir -p "$work/fetch/src"
cat >"$work/fetch/Cargo.toml" <<TOML
[package]
name = "fetch-redis-cell"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
redis-cell = "=$version"
TOML
: >"$work/fetch/src/lib.rs"
cargo vendor --quiet --versioned-dirs --manifest-path "$work/fetch/Cargo.toml" "$work/vendor" >/dev/null ||
  { echo "redis-cell.sh: cargo could not download redis-cell $version from the registry" >&2; exit 1; }
# The crate is a package of its own: build it where it is (a copy, without
# the vendor checksums, which forbid changes such as its target/).
rm -rf "$work/redis-cell-$version"
cp -r "$work/vendor/redis-cell-$version" "$work/redis-cell-$version"
rm -f "$work/redis-cell-$version/.cargo-checksum.json"
(cd "$work/redis-cell-$version" && cargo build --quiet --release 2>"$work/build.log") ||
  { tail -5 "$work/build.log" >&2; echo "redis-cell.sh: cargo build of redis-cell $version failed" >&2; exit 1; }
[ -f "$module" ] || { echo "redis-cell.sh: no $module after cargo build" >&2; exit 1; }
echo "$module"
