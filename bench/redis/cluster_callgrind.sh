#!/usr/bin/env bash
# Instructions redis-server executes per gcra decision (inside its command
# dispatcher, `call`) in cluster mode vs as a plain server: two servers
# under callgrind, one plain and one cluster-enabled node serving all 16,384
# slots (no replicas, nothing else differs), each given 2,000 FCALLs of the
# Lua library on 1,000 keys by redis-benchmark (one connection), one call
# per decision and as the node batch of 32 (core/redis/node_batch.lua).
# Counts do not depend on the machine's load (bench/README.md, Cluster).
#   bench/redis/cluster_callgrind.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=2000
mapfile -t ports < <(python3 "$root/scripts/lib/free-ports.py" 3)  # the third: the cluster bus
plain_port=${ports[0]} cluster_port=${ports[1]}
out=$(mktemp -d /tmp/rl-cluster-callgrind.XXXXXX)
library=$(sed -n '1s/^"\(rl_[0-9a-f]*\)".*/\1/p' "$build/core/generated/redis_library.inc")
python3 -c '
import sys
s = open(sys.argv[1]).read()
print(s[s.index("R\"rl_lua(") + 9:s.rindex(")rl_lua\"")], end="")' \
  "$build/core/generated/redis_library.inc" >"$out/library.lua"
servers=()
trap 'kill "${servers[@]}" 2>/dev/null || true; rm -rf "$out"' EXIT
start() {  # NAME PORT OPTIONS...
  valgrind --tool=callgrind --callgrind-out-file="$out/$1.cg" --collect-atstart=no \
    --toggle-collect=call redis-server --port "$2" --save '' --appendonly no --dir "$out" "${@:3}" \
    >"$out/$1.log" 2>&1 &
  servers+=($!)
  for _ in $(seq 300); do redis-cli -p "$2" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
  redis-cli -p "$2" -x FUNCTION LOAD <"$out/library.lua" >/dev/null
}
start plain "$plain_port"
plain=${servers[0]}
start cluster "$cluster_port" --cluster-enabled yes --cluster-config-file "$out/nodes.conf" \
  --cluster-port "${ports[2]}"
cluster=${servers[1]}
redis-cli -p "$cluster_port" CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
for _ in $(seq 300); do
  redis-cli -p "$cluster_port" CLUSTER INFO | grep -q 'cluster_state:ok' && break
  sleep 0.1
done
# limit window burst limit_reduced window_reduced granularity: 10^6/s, never denied.
limits="0 1000000 1000000 1000000 1 1 0"
count() {  # PID PORT NAME REQUESTS COMMAND...: instructions per request
  callgrind_control -z "$1" >/dev/null 2>&1
  redis-benchmark -p "$2" -n "$4" -c 1 -r 1000 "${@:5}" >/dev/null 2>&1
  callgrind_control -d "$3" "$1" >/dev/null 2>&1
  local file
  file=$(grep -l "^desc: Trigger: dump $3\$" "$out"/*.cg.* | head -1)
  echo $(($(sed -n 's/^summary: //p' "$file") / $4))
}
# The node batch: FCALL node_batch 1 key1 32 key2... gcra_acquire limits 32.
batch=(FCALL "${library}_node_batch" 1 "b1:__rand_int__" 32)
for i in $(seq 2 32); do batch+=("b$i:__rand_int__"); done
batch+=(gcra_acquire "$limits" 32)
for where in plain cluster; do
  pid=$plain port=$plain_port
  [ "$where" = cluster ] && pid=$cluster port=$cluster_port
  one=$(count "$pid" "$port" "one-$where" "$n" FCALL "${library}_gcra_acquire" 1 "k:__rand_int__" "$limits")
  per_batch=$(count "$pid" "$port" "batch-$where" $((n / 32)) "${batch[@]}")
  printf '{"bench":"cluster_callgrind","server":"%s","instructions_per_decision":%d,"node_batch_of_32_instructions_per_decision":%d}\n' \
    "$where" "$one" $((per_batch / 32))
done
