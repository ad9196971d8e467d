# Sourced by scripts/with-redis: a master, its replica and three sentinels on
# loopback for the redis+sentinel:// tests. Master and replica want a
# password, and so does the sentinel (a different one), so that the tests
# show which credential goes where.
#   sentinel_servers DIR   (needs free_port from with-redis)
# Exports RL_TEST_SENTINEL_PORT (the first sentinel), RL_TEST_SENTINEL_PORTS
# (all three), RL_TEST_SENTINEL_MASTER (the name),
# RL_TEST_SENTINEL_PASSWORD, RL_TEST_SENTINEL_DATA_PASSWORD (master's and
# replica's), RL_TEST_SENTINEL_NODE_PORTS ("master replica" at the start).

sentinel_servers() {
  local d="$1" name=rl-master data_pw=rl-data-password sentinel_pw=rl-sentinel-password
  local mp rp sp
  mp=$(free_port)
  rp=$(free_port)
  sp=$(free_port)
  for role in master replica; do
    local p=$mp extra=()
    [ "$role" = replica ] && p=$rp && extra=(--replicaof 127.0.0.1 "$mp")
    mkdir -p "$d/sentinel-$role"
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --pidfile "$d/sentinel-$role/redis.pid" --logfile "$d/sentinel-$role/redis.log" \
      --dir "$d/sentinel-$role" --requirepass "$data_pw" --masterauth "$data_pw" \
      --repl-diskless-sync yes --repl-diskless-sync-delay 0 --shutdown-timeout 0 \
      "${extra[@]}" >/dev/null
  done
  # The sentinels find the replica in the master's INFO: start them once the
  # replica is in sync, so that a failover has somewhere to go.
  for _ in $(seq 200); do
    redis-cli -p "$rp" -a "$data_pw" --no-auth-warning info replication 2>/dev/null |
      grep -q 'master_link_status:up' && break
    sleep 0.05
  done
  # Three sentinels, quorum two: what a production deployment runs.
  local ports=() i sub
  for i in 1 2 3; do
    sp=$(free_port)
    ports+=("$sp")
    sub="$d/sentinel-$i"
    mkdir -p "$sub"
    cat >"$sub/sentinel.conf" <<CONF
port $sp
bind 127.0.0.1
daemonize yes
pidfile $sub/redis.pid
logfile $sub/redis.log
dir $sub
requirepass $sentinel_pw
sentinel monitor $name 127.0.0.1 $mp 2
sentinel auth-pass $name $data_pw
sentinel sentinel-pass $sentinel_pw
sentinel down-after-milliseconds $name 1000
sentinel failover-timeout $name 5000
sentinel parallel-syncs $name 1
CONF
    redis-server "$sub/sentinel.conf" --sentinel >/dev/null
  done
  for sp in "${ports[@]}"; do
    for _ in $(seq 100); do
      redis-cli -p "$sp" -a "$sentinel_pw" --no-auth-warning \
        sentinel get-master-addr-by-name "$name" 2>/dev/null | grep -q "$mp" && break
      sleep 0.05
    done
  done
  sp=${ports[0]}
  export RL_TEST_SENTINEL_PORT="$sp"
  export RL_TEST_SENTINEL_PORTS="${ports[*]}"
  export RL_TEST_SENTINEL_MASTER="$name"
  export RL_TEST_SENTINEL_PASSWORD="$sentinel_pw"
  export RL_TEST_SENTINEL_DATA_PASSWORD="$data_pw"
  export RL_TEST_SENTINEL_NODE_PORTS="$mp $rp"
}
