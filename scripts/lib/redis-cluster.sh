# Sourced by scripts/with-redis: a Redis Cluster of three masters, each with
# one replica, on loopback, for the redis+cluster:// tests. The nodes want a
# password, so that the tests show it reaches every node. A short
# cluster-node-timeout lets a replica take over a stopped master in about
# two seconds (the failover test).
#   cluster_nodes    starts the six nodes (scripts/lib/redis-servers.sh; each
#                    serves TLS too, with the certificates of tls_servers)
#   cluster_create   waits for them and starts redis-cli --cluster create in
#                    the background
#   cluster_ready    waits until it is done and every node sees the whole
#                    cluster, fails with redis-cli's output if it failed
# Exports RL_TEST_CLUSTER_URL (redis+cluster://:pw@first-master),
# RL_TEST_CLUSTER_TLS_URL (rediss+cluster://, the same nodes' TLS ports),
# RL_TEST_CLUSTER_PASSWORD, RL_TEST_CLUSTER_PORTS (the six ports, masters
# first; DIR/cluster-PORT/ holds each node's pid file and log) and
# RL_TEST_CLUSTER_TLS_PORTS (their TLS ports, in the same order).

cluster_pw=rl-cluster-password
cluster_names=(cluster-1 cluster-2 cluster-3 cluster-4 cluster-5 cluster-6)

# cluster_node NAME PORT TLS_PORT BUS_PORT: a node's spec. The bus port is
# chosen like the others (port + 10000 may not be free). Plain and TLS
# ports both: with tls-cluster a node names its TLS ports to TLS clients
# (rediss+cluster://) and its plain ports to the others; the bus,
# replication and MIGRATE go over TLS.
cluster_node() {
  local d="$dir/cluster-$2"
  spec_dir=$d
  spec_ports="port $2, tls-port $3, cluster-port $4"
  spec_args=(--port "$2" --tls-port "$3" --cluster-port "$4" --bind 127.0.0.1 --save ''
    --tls-cert-file "$RL_TEST_TLS_DIR/server.pem" --tls-key-file "$RL_TEST_TLS_DIR/server.key"
    --tls-ca-cert-file "$RL_TEST_TLS_DIR/ca.pem" --tls-auth-clients no --tls-cluster yes
    --tls-replication yes --appendonly no --pidfile "$d/redis.pid" --logfile "$d/redis.log"
    --dir "$d" --cluster-enabled yes --cluster-config-file "$d/nodes.conf"
    --cluster-node-timeout 1000 --cluster-announce-ip 127.0.0.1 --requirepass "$cluster_pw"
    --masterauth "$cluster_pw" --repl-diskless-sync yes --repl-diskless-sync-delay 0
    --shutdown-timeout 0 ${module_args[@]+"${module_args[@]}"})
}

cluster_nodes() {
  local name
  for name in "${cluster_names[@]}"; do server "$name" 3 cluster_node; done
}

# cluster_port NAME: the node's client port (the first of its ports).
cluster_port() { echo "${srv_ports[$1]%% *}"; }

cluster_cli() {
  redis-cli -p "$(cluster_port "$1")" -a "$cluster_pw" --no-auth-warning "${@:2}" 2>&1
}

cluster_create() {
  local name nodes=()
  await_servers "${cluster_names[@]}"
  for name in "${cluster_names[@]}"; do nodes+=("127.0.0.1:$(cluster_port "$name")"); done
  # A time limit of its own: it waits for the nodes to agree with no end.
  timeout "$((fixture_timeout * 2))" redis-cli -a "$cluster_pw" --no-auth-warning \
    --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes \
    </dev/null >"$dir/cluster-create.log" 2>&1 &
  cluster_create_pid=$!
  background "$cluster_create_pid"
}

# Ready when the node says ok, sees three replicas connected (its own flags
# say myself,slave), and, on a replica, is in sync (a failover needs a
# replica that has the data).
cluster_node_ready() {
  local info nodes replication
  info=$(cluster_cli "$1" cluster info) || return 1
  [[ $info == *cluster_state:ok* ]] || return 1
  nodes=$(cluster_cli "$1" cluster nodes) || return 1
  [ "$(awk '$3 ~ /(^|,)slave(,|$)/ && $8 == "connected"' <<<"$nodes" | wc -l)" = 3 ] || return 1
  replication=$(cluster_cli "$1" info replication) || return 1
  [[ $replication == *role:master* || $replication == *master_link_status:up* ]]
}

cluster_ready() {
  local name status=0 ports=() tls_ports=() p t
  wait "$cluster_create_pid" || status=$?
  if [ "$status" -ne 0 ]; then
    [ "$status" -ne 124 ] || status="124: still running after $((fixture_timeout * 2)) s"
    {
      echo "with-redis: redis-cli --cluster create failed (status $status) on" \
        "$(for name in "${cluster_names[@]}"; do printf '%s (%s); ' "$name" "${srv_desc[$name]}"; done)"
      echo "--- its output ($dir/cluster-create.log):"
      tail -n 40 "$dir/cluster-create.log"
    } >&2
    exit 1
  fi
  for name in "${cluster_names[@]}"; do
    wait_until "$name" "part of a whole cluster (cluster_state:ok, 3 replicas connected, in sync)" \
      cluster_node_ready "$name"
    read -r p t _ <<<"${srv_ports[$name]}"
    ports+=("$p")
    tls_ports+=("$t")
  done
  export RL_TEST_CLUSTER_URL="redis+cluster://:$cluster_pw@127.0.0.1:${ports[0]}"
  export RL_TEST_CLUSTER_PASSWORD="$cluster_pw"
  export RL_TEST_CLUSTER_PORTS="${ports[*]}"
  export RL_TEST_CLUSTER_TLS_PORTS="${tls_ports[*]}"
  export RL_TEST_CLUSTER_TLS_URL="rediss+cluster://:$cluster_pw@127.0.0.1:${tls_ports[0]}?tls_ca_file=$RL_TEST_TLS_DIR/ca.pem"
}
