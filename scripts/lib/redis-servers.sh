# Sourced by scripts/with-redis: starts its redis-servers by name, and when
# one does not come up says which, on which ports, with the end of its log.
#   server NAME COUNT SPEC   takes COUNT free ports and starts a server in the
#                            background; SPEC NAME PORT... sets spec_dir,
#                            spec_ports (e.g. "port 7000, tls-port 7001") and
#                            spec_args (redis-server's arguments)
#   await_servers NAME...    returns once each listens on all its ports; one
#                            whose port was taken before it could bind starts
#                            again on fresh ports (up to three times)
#   wait_until NAME WHAT CHECK...   runs CHECK until it succeeds, fails after
#                            fixture_timeout seconds or if NAME exits
#   fail NAME WHAT           the message and NAME's log tail on stderr, exit 1
#   background PID           counts a helper the cleanup must stop too
#   fixture_pids             every pid started, for the cleanup
# Needs lib (this directory) and dir (the fixture's directory).

# Seconds each step may take: a loaded machine is slow, a hung server fails anyway.
fixture_timeout=${RL_TEST_FIXTURE_TIMEOUT:-60}
[[ $fixture_timeout =~ ^[1-9][0-9]*$ ]] || {
  echo "with-redis: RL_TEST_FIXTURE_TIMEOUT must be a whole number of seconds, not \"$fixture_timeout\"" >&2
  exit 1
}
declare -A srv_pid srv_dir srv_ports srv_desc srv_spec srv_tries
port_pool=()
used_ports=()

# take_ports COUNT: sets took to COUNT ports never handed out before.
take_ports() {
  local count=$1
  if [ "${#port_pool[@]}" -lt "$count" ]; then
    # shellcheck disable=SC2207 # one number per line
    port_pool+=($(python3 "$lib/free-ports.py" "$((count - ${#port_pool[@]}))" \
      "${used_ports[@]}" "${port_pool[@]}"))
  fi
  took=("${port_pool[@]:0:count}")
  port_pool=("${port_pool[@]:count}")
  used_ports+=("${took[@]}")
}

# reserve_ports COUNT: chooses COUNT ports in one go, for the servers to come.
reserve_ports() {
  # shellcheck disable=SC2207 # one number per line
  port_pool+=($(python3 "$lib/free-ports.py" "$1" "${used_ports[@]}" "${port_pool[@]}"))
}

server() {
  local name=$1 count=$2
  srv_spec[$name]=$3
  srv_tries[$name]=1
  take_ports "$count"
  srv_ports[$name]="${took[*]}"
  launch "$name"
}

launch() {
  local name=$1
  # shellcheck disable=SC2086 # the ports are words
  "${srv_spec[$name]}" "$name" ${srv_ports[$name]}
  srv_dir[$name]=$spec_dir
  srv_desc[$name]=$spec_ports
  mkdir -p "$spec_dir"
  rm -f "$spec_dir/redis.log"
  # In the foreground of a background job rather than daemonized: its pid is
  # known at once, so that an exit is seen at once; redis.out has what it
  # says before its log is open (a bad argument).
  # spec_env (optional): VAR=value words the server runs with (LD_PRELOAD
  # of a sanitizer runtime for a sanitized module); reset after each.
  if [ ${#spec_env[@]} -gt 0 ]; then
    env "${spec_env[@]}" "$redis_server" "${spec_args[@]}" --daemonize no </dev/null \
      >"$spec_dir/redis.out" 2>&1 &
  else
    "$redis_server" "${spec_args[@]}" --daemonize no </dev/null >"$spec_dir/redis.out" 2>&1 &
  fi
  srv_pid[$name]=$!
  spec_env=()
}

spec_env=()
background_pids=()
background() { background_pids+=("$1"); }
fixture_pids() { echo "${srv_pid[@]}" "${background_pids[@]}"; }

await_servers() {
  local pending=("$@") name verdict verdicts status taken watch again
  while [ ${#pending[@]} -gt 0 ]; do
    watch=()
    for name in "${pending[@]}"; do
      watch+=("$name" "${srv_pid[$name]}" "$(tr ' ' , <<<"${srv_ports[$name]}")")
    done
    # All verdicts at once: a watcher that fails stops the fixture (ERR).
    verdicts=$(python3 "$lib/await-listening.py" "$fixture_timeout" "${watch[@]}")
    [ "$(wc -l <<<"$verdicts")" -eq ${#pending[@]} ] || {
      echo "with-redis: await-listening.py gave no verdict on some of: ${pending[*]}" >&2
      exit 1
    }
    again=()
    while read -r verdict name; do
      case $verdict in
        ready) ;;
        exited)
          status=0
          wait "${srv_pid[$name]}" || status=$?
          taken=$(grep -hs -m1 'Address already in use' "${srv_dir[$name]}/redis.log" |
            sed 's/^[0-9]*:[A-Z] [^#]*# //') || true
          if [ -n "$taken" ] && [ "${srv_tries[$name]}" -lt 3 ]; then
            echo "with-redis: $name (${srv_desc[$name]}): a port was taken before it could" \
              "bind ($taken); starting it again on fresh ports" >&2
            srv_tries[$name]=$((srv_tries[$name] + 1))
            take_ports "$(wc -w <<<"${srv_ports[$name]}")"
            srv_ports[$name]="${took[*]}"
            launch "$name"
            again+=("$name")
          else
            fail "$name" "exited with status $status before it listened"
          fi
          ;;
        *) fail "$name" "was not listening ${fixture_timeout} s after it started" ;;
      esac
    done <<<"$verdicts"
    pending=("${again[@]}")
  done
}

wait_until() {
  local name=$1 what=$2 end=$((SECONDS + fixture_timeout))
  shift 2
  until "$@"; do
    kill -0 "${srv_pid[$name]}" 2>/dev/null || fail "$name" "exited before it was $what"
    [ "$SECONDS" -lt "$end" ] || fail "$name" "still not $what after ${fixture_timeout} s"
    sleep 0.05
  done
}

fail() {
  local name=$1 what=$2 file
  {
    echo "with-redis: $name (${srv_desc[$name]:-not started}) $what"
    for file in "${srv_dir[$name]:-/nonexistent}"/redis.{out,log}; do
      [ -s "$file" ] || continue
      echo "--- last 20 lines of $file:"
      tail -n 20 "$file"
    done
  } >&2
  exit 1
}
