#!/usr/bin/env bash
# Instructions per rl_limiter_acquire on memory:// per algorithm (one
# thread, 65,536 live distinct keys): rl_memory_instructions under
# callgrind, counting only the calls after the warm-up, less the loop's own
# instructions. Counts do not depend on the machine's load.
#   bench/memory/instructions.sh [BUILD_DIR] [CALLS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
calls=${2:-200000}
out=$(mktemp -d /tmp/rl-memory-callgrind.XXXXXX)
trap 'rm -rf "$out"' EXIT
for algorithm in gcra token_bucket fixed_window sliding_window sliding_log; do
  valgrind --tool=callgrind --callgrind-out-file="$out/$algorithm" --collect-atstart=no \
    --toggle-collect='*measured_calls*' "$build/bench/memory/rl_memory_instructions" \
    "$algorithm" "$calls" >/dev/null 2>"$out/$algorithm.log"
  total=$(sed -n 's/^totals: //p' "$out/$algorithm")
  # The loop's own instructions: the self cost of measured_calls.
  loop=$(callgrind_annotate --inclusive=no "$out/$algorithm" 2>/dev/null |
    awk '/measured_calls/ && !n++ { gsub(",", "", $1); print $1 }')
  python3 -c "import sys; t, l, n = map(int, sys.argv[1:4]); print(f'{sys.argv[4]}: {(t - l) / n:.0f} instructions per acquire')" \
    "$total" "${loop:-0}" "$calls" "$algorithm"
done
