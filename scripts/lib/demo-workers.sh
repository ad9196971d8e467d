# Starts two demo worker processes per language behind one barrier (all
# ready, then released at once) and prints their JSON lines after
# {"start_signal_us": T}. The worker protocol is in examples/README.md.
#   run_workers URL NAME LIMIT KEY ATTEMPTS
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# Each line: the command (shell words) that starts one worker; arguments follow.
worker_commands() {
  printf '%q\n' "$root/build/examples/rl_demo_worker"
  if [ -f "$root/bindings/node/build/Release/rl_native.node" ] && [ -f "$root/examples/node/demo-worker.js" ]; then
    printf '%q %q\n' node "$root/examples/node/demo-worker.js"
  fi
  if [ -x "$root/build/examples/rl-go-demo-worker" ]; then
    printf '%q\n' "$root/build/examples/rl-go-demo-worker"
  fi
  if [ -x "$root/build/examples/rl-rust-demo-worker" ]; then
    printf '%q %q %q\n' env "LD_LIBRARY_PATH=$root/build/capi" "$root/build/examples/rl-rust-demo-worker"
  fi
  if [ -f "$root/build/examples/java/DemoWorker.class" ] && [ -f "$root/bindings/java/target/rl-1.0.0.jar" ] &&
    command -v java >/dev/null 2>&1; then
    printf '%q %q %q %q %q\n' java "-Drl.jni.path=$root/build/bindings/java/native/librl_jni.so" \
      -cp "$root/bindings/java/target/rl-1.0.0.jar:$root/build/examples/java" DemoWorker
  fi
  if [ -x "$root/build/python/venv/bin/python" ] && [ -f "$root/examples/python/demo_worker.py" ] &&
    "$root/build/python/venv/bin/python" -c 'import rl' 2>/dev/null; then
    printf '%q %q\n' "$root/build/python/venv/bin/python" "$root/examples/python/demo_worker.py"
  fi
}

run_workers() {
  worker_commands | python3 "$root/scripts/lib/demo-barrier.py" 2 "$@"
}
