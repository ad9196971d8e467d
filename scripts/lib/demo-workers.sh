# Starts one demo worker process per language (two of each), all at once,
# and prints their JSON lines. The worker protocol is in examples/README.md.
#   run_workers URL NAME LIMIT KEY ATTEMPTS
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# Each line: a command that starts one worker (arguments follow).
worker_commands() {
  echo "$root/build/examples/rl_demo_worker"
  if [ -f "$root/bindings/node/build/Release/rl_native.node" ] && [ -f "$root/examples/node/demo-worker.js" ]; then
    echo "node $root/examples/node/demo-worker.js"
  fi
  if [ -x "$root/build/examples/rl-go-demo-worker" ]; then
    echo "$root/build/examples/rl-go-demo-worker"
  fi
}

run_workers() {
  local pids=() cmd
  while read -r cmd; do
    for _ in 1 2; do
      $cmd "$@" &
      pids+=($!)
    done
  done < <(worker_commands)
  local rc=0
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  return $rc
}
