#!/usr/bin/env bash
# What cluster mode itself costs Redis, without replicas, TLS or other
# masters: `rl_redis_bench cluster` on three servers started here, a plain
# one ("standalone"), the same with a password ("replicated": no replica
# here) and a cluster-enabled node serving all 16,384 slots ("cluster", one
# master). The JSON lines are rl_redis_bench cluster's.
#   bench/redis/cluster_mode_cost.sh [BUILD_DIR] [CALLS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
calls=${2:-20000}
mapfile -t ports < <(python3 "$root/scripts/lib/free-ports.py" 4)  # the fourth: the cluster bus
out=$(mktemp -d /tmp/rl-cluster-mode.XXXXXX)
pw=rl-cluster-mode
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$out"' EXIT
start() {  # PORT OPTIONS...
  redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$out" "${@:2}" \
    >"$out/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do redis-cli -p "$1" -a "$pw" --no-auth-warning ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
}
start "${ports[0]}"
start "${ports[1]}" --requirepass "$pw"
start "${ports[2]}" --requirepass "$pw" --cluster-enabled yes --cluster-config-file "$out/nodes.conf" \
  --cluster-port "${ports[3]}"
redis-cli -p "${ports[2]}" -a "$pw" --no-auth-warning CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
for _ in $(seq 300); do
  redis-cli -p "${ports[2]}" -a "$pw" --no-auth-warning CLUSTER INFO | grep -q 'cluster_state:ok' && break
  sleep 0.1
done
RL_TEST_REDIS_URL="redis://127.0.0.1:${ports[0]}" RL_TEST_REDIS_PORT=${ports[0]} \
  RL_TEST_SENTINEL_NODE_PORTS=${ports[1]} RL_TEST_SENTINEL_DATA_PASSWORD=$pw \
  RL_TEST_CLUSTER_URL="redis+cluster://:$pw@127.0.0.1:${ports[2]}" RL_TEST_CLUSTER_PORTS=${ports[2]} \
  RL_TEST_CLUSTER_PASSWORD=$pw "$build/bench/redis/rl_redis_bench" cluster "$calls"
