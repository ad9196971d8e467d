# Sourced by scripts/with-redis: a master, its replica and three sentinels on
# loopback for the redis+sentinel:// tests. Master and replica want a
# password, and so does the sentinel (a different one), so that the tests
# show which credential goes where.
#   sentinel_data_servers   starts master and replica (sentinel-master/,
#                           sentinel-replica/; scripts/lib/redis-servers.sh)
#   sentinel_servers        makes the replica follow the master, then starts
#                           the sentinels (sentinel-1/ to sentinel-3/) and
#                           waits until each answers for the master
# Exports RL_TEST_SENTINEL_PORT (the first sentinel), RL_TEST_SENTINEL_PORTS
# (all three), RL_TEST_SENTINEL_MASTER (the name),
# RL_TEST_SENTINEL_PASSWORD, RL_TEST_SENTINEL_DATA_PASSWORD (master's and
# replica's), RL_TEST_SENTINEL_NODE_PORTS ("master replica" at the start).

sentinel_master=rl-master
sentinel_data_pw=rl-data-password
sentinel_pw=rl-sentinel-password

# sentinel_data_server NAME PORT: the spec (redis-servers.sh) of master and
# replica; the replica is told whom to follow once both listen, so that
# either can be started again on another port.
sentinel_data_server() {
  local d="$dir/$1"
  spec_dir=$d
  spec_ports="port $2"
  spec_args=(--port "$2" --bind 127.0.0.1 --save '' --appendonly no --pidfile "$d/redis.pid"
    --logfile "$d/redis.log" --dir "$d" --requirepass "$sentinel_data_pw"
    --masterauth "$sentinel_data_pw" --repl-diskless-sync yes --repl-diskless-sync-delay 0
    --shutdown-timeout 0 ${module_args[@]+"${module_args[@]}"})
}

# sentinel_server NAME PORT: a sentinel's spec; its configuration file is its own
# (a sentinel rewrites it).
sentinel_server() {
  local d="$dir/$1"
  spec_dir=$d
  spec_ports="port $2"
  mkdir -p "$d"
  cat >"$d/sentinel.conf" <<CONF
port $2
bind 127.0.0.1
pidfile $d/redis.pid
logfile $d/redis.log
dir $d
requirepass $sentinel_pw
sentinel monitor $sentinel_master 127.0.0.1 ${srv_ports[sentinel-master]} 2
sentinel auth-pass $sentinel_master $sentinel_data_pw
sentinel sentinel-pass $sentinel_pw
sentinel down-after-milliseconds $sentinel_master 1000
sentinel failover-timeout $sentinel_master 5000
sentinel parallel-syncs $sentinel_master 1
CONF
  spec_args=("$d/sentinel.conf" --sentinel)
}

sentinel_data_servers() {
  server sentinel-master 1 sentinel_data_server
  server sentinel-replica 1 sentinel_data_server
}

# data_cli NAME ARGS...: redis-cli on master or replica.
data_cli() {
  redis-cli -p "${srv_ports[$1]}" -a "$sentinel_data_pw" --no-auth-warning "${@:2}" 2>&1
}

replica_in_sync() {
  local info
  info=$(data_cli sentinel-replica info replication) || return 1
  [[ $info == *master_link_status:up* ]]
}

sentinel_knows_master() {
  local answer
  answer=$(redis-cli -p "${srv_ports[$1]}" -a "$sentinel_pw" --no-auth-warning \
    sentinel get-master-addr-by-name "$sentinel_master" 2>&1) || return 1
  [[ $answer == *"${srv_ports[sentinel-master]}"* ]]
}

sentinel_servers() {
  local mp rp answer i
  await_servers sentinel-master sentinel-replica
  mp=${srv_ports[sentinel-master]}
  rp=${srv_ports[sentinel-replica]}
  answer=$(data_cli sentinel-replica replicaof 127.0.0.1 "$mp") || true
  [ "$answer" = OK ] || fail sentinel-replica "answered \"$answer\" to REPLICAOF 127.0.0.1 $mp"
  # The sentinels find the replica in the master's INFO: start them once the
  # replica is in sync, so that a failover has somewhere to go.
  wait_until sentinel-replica "in sync with sentinel-master (port $mp)" replica_in_sync
  # Three sentinels, quorum two: what a production deployment runs.
  for i in 1 2 3; do server "sentinel-$i" 1 sentinel_server; done
  await_servers sentinel-1 sentinel-2 sentinel-3
  for i in 1 2 3; do
    wait_until "sentinel-$i" "answering for $sentinel_master (port $mp)" sentinel_knows_master "sentinel-$i"
  done
  export RL_TEST_SENTINEL_PORT="${srv_ports[sentinel-1]}"
  export RL_TEST_SENTINEL_PORTS="${srv_ports[sentinel-1]} ${srv_ports[sentinel-2]} ${srv_ports[sentinel-3]}"
  export RL_TEST_SENTINEL_MASTER="$sentinel_master"
  export RL_TEST_SENTINEL_PASSWORD="$sentinel_pw"
  export RL_TEST_SENTINEL_DATA_PASSWORD="$sentinel_data_pw"
  export RL_TEST_SENTINEL_NODE_PORTS="$mp $rp"
}
