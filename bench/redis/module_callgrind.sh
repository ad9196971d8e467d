#!/usr/bin/env bash
# Instructions redis-server executes per decision (inside its command
# dispatcher, `call`), rl's Redis module vs the Lua library, per algorithm:
# one redis-server under callgrind with the module loaded; 2,000 acquires of
# each kind by redis-benchmark (one connection), counters zeroed between,
# and the module's acquires as RL.BATCH of 64 (31 commands) and as RL.MANY
# of 64 (the algorithm, clock and limits once per batch).
# Counts do not depend on the machine's load (docs/redis-module.md).
#   bench/redis/module_callgrind.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=2000
port=$(python3 "$root/scripts/lib/free-ports.py" 1)
out=$(mktemp -d /tmp/rl-callgrind.XXXXXX)
library=$(sed -n '1s/^"\(rl_[0-9a-f]*\)".*/\1/p' "$build/core/generated/redis_library.inc")
python3 -c '
import sys
s = open(sys.argv[1]).read()
print(s[s.index("R\"rl_lua(") + 9:s.rindex(")rl_lua\"")], end="")' \
  "$build/core/generated/redis_library.inc" >"$out/library.lua"
valgrind --tool=callgrind --callgrind-out-file="$out/cg" --collect-atstart=no --toggle-collect=call \
  redis-server --port "$port" --save '' --appendonly no \
  --loadmodule "$build/redis-module/librl_redis.so" >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$out"' EXIT
for _ in $(seq 300); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$port" -x FUNCTION LOAD <"$out/library.lua" >/dev/null
# limit window burst limit_reduced window_reduced granularity: 10^6/s, never denied.
for algorithm in gcra token_bucket fixed_window sliding_window sliding_log; do
  g=0
  [ "$algorithm" = sliding_window ] && g=100000
  limits="0 1000000 1000000 1000000 1 1 $g"
  count() {  # NAME COMMAND...: instructions per call
    callgrind_control -z "$server" >/dev/null 2>&1
    redis-benchmark -p "$port" -n "${requests:-$n}" -c 1 -r 1000 "${@:2}" >/dev/null 2>&1
    callgrind_control -d "$1" "$server" >/dev/null 2>&1
    local file
    file=$(grep -l "^desc: Trigger: dump $1\$" "$out"/cg.* | head -1)
    echo $(($(sed -n 's/^summary: //p' "$file") / ${requests:-$n}))
  }
  lua=$(count "lua-$algorithm" FCALL "${library}_${algorithm}_acquire" 1 "l{$algorithm:__rand_int__}" "" 1 "$limits")
  module=$(count "module-$algorithm" RL.ACQUIRE "m{$algorithm:__rand_int__}" "$algorithm" "" 1 "$limits")
  printf '{"bench":"module_callgrind","algorithm":"%s","lua_instructions_per_decision":%d,"module_instructions_per_decision":%d,"ratio":%s}\n' \
    "$algorithm" "$lua" "$module" "$(python3 -c "print(round($module / $lua, 2))")"
  # RL.BATCH of 64 acquires (what the store sends for calls in flight): per decision.
  batch=(RL.BATCH)
  for _ in $(seq 64); do batch+=("b{$algorithm:__rand_int__}" "${algorithm}_acquire" "" 1 "$limits"); done
  per_batch=$(requests=$((n / 64)) count "batch-$algorithm" "${batch[@]}")
  printf '{"bench":"module_callgrind","algorithm":"%s","batch":64,"module_instructions_per_decision":%d}\n' \
    "$algorithm" $((per_batch / 64))
  many=(RL.MANY "${algorithm}_acquire" "" "$limits")
  for _ in $(seq 64); do many+=("n{$algorithm:__rand_int__}" 1); done
  per_many=$(requests=$((n / 64)) count "many-$algorithm" "${many[@]}")
  printf '{"bench":"module_callgrind","algorithm":"%s","many":64,"module_instructions_per_decision":%d}\n' \
    "$algorithm" $((per_many / 64))
done
