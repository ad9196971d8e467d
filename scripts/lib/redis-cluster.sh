# Sourced by scripts/with-redis: a Redis Cluster of three masters, each with
# one replica, on loopback, for the redis+cluster:// tests. The nodes want a
# password, so that the tests show it reaches every node. A short
# cluster-node-timeout lets a replica take over a stopped master in about
# two seconds (the failover test).
#   cluster_servers DIR   (needs free_port from with-redis, and the
#   certificates of tls_servers: each node serves TLS too)
# Exports RL_TEST_CLUSTER_URL (redis+cluster://:pw@first-master),
# RL_TEST_CLUSTER_TLS_URL (rediss+cluster://, the same nodes' TLS ports),
# RL_TEST_CLUSTER_PASSWORD, RL_TEST_CLUSTER_PORTS (the six ports, masters
# first; DIR/cluster-PORT/ holds each node's pid file and log) and
# RL_TEST_CLUSTER_TLS_PORTS (their TLS ports, in the same order).

cluster_servers() {
  local d="$1" pw=rl-cluster-password ports=() tls_ports=() p t sub
  for _ in 1 2 3 4 5 6; do
    p=$(free_port)
    sub="$d/cluster-$p"
    mkdir -p "$sub"
    # cluster-port: the bus port, chosen free too (port + 10000 may not be).
    t=$(free_port)
    # Plain and TLS ports both: with tls-cluster a node names its TLS ports
    # to TLS clients (rediss+cluster://) and its plain ports to the others;
    # the bus, replication and MIGRATE go over TLS.
    redis-server --port "$p" --cluster-port "$(free_port)" --bind 127.0.0.1 --save '' \
      --tls-port "$t" --tls-cert-file "$RL_TEST_TLS_DIR/server.pem" \
      --tls-key-file "$RL_TEST_TLS_DIR/server.key" --tls-ca-cert-file "$RL_TEST_TLS_DIR/ca.pem" \
      --tls-auth-clients no --tls-cluster yes --tls-replication yes \
      --appendonly no --daemonize yes --pidfile "$sub/redis.pid" --logfile "$sub/redis.log" \
      --dir "$sub" --cluster-enabled yes --cluster-config-file "$sub/nodes.conf" \
      --cluster-node-timeout 1000 --cluster-announce-ip 127.0.0.1 --requirepass "$pw" \
      --masterauth "$pw" --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
      --shutdown-timeout 0 >/dev/null
    ports+=("$p")
    tls_ports+=("$t")
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 100); do
      redis-cli -p "$p" -a "$pw" --no-auth-warning ping 2>/dev/null | grep -q PONG && break
      sleep 0.05
    done
  done
  local nodes=()
  for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
  redis-cli -a "$pw" --no-auth-warning --cluster create "${nodes[@]}" --cluster-replicas 1 \
    --cluster-yes >"$d/cluster-create.log" 2>&1
  # Ready when every node says ok, sees three masters and three replicas,
  # and every replica is in sync (a failover needs a replica that has the
  # data).
  for p in "${ports[@]}"; do
    for _ in $(seq 200); do
      redis-cli -p "$p" -a "$pw" --no-auth-warning cluster info 2>/dev/null |
        grep -q 'cluster_state:ok' &&
        [ "$(redis-cli -p "$p" -a "$pw" --no-auth-warning cluster nodes 2>/dev/null |
          grep -c ' slave .* connected')" = 3 ] && break
      sleep 0.05
    done
    if redis-cli -p "$p" -a "$pw" --no-auth-warning info replication | grep -q 'role:slave'; then
      for _ in $(seq 200); do
        redis-cli -p "$p" -a "$pw" --no-auth-warning info replication |
          grep -q 'master_link_status:up' && break
        sleep 0.05
      done
    fi
  done
  export RL_TEST_CLUSTER_URL="redis+cluster://:$pw@127.0.0.1:${ports[0]}"
  export RL_TEST_CLUSTER_PASSWORD="$pw"
  export RL_TEST_CLUSTER_PORTS="${ports[*]}"
  export RL_TEST_CLUSTER_TLS_PORTS="${tls_ports[*]}"
  export RL_TEST_CLUSTER_TLS_URL="rediss+cluster://:$pw@127.0.0.1:${tls_ports[0]}?tls_ca_file=$RL_TEST_TLS_DIR/ca.pem"
}
