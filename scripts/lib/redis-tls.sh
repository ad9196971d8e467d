# Sourced by scripts/with-redis: TLS servers for the rediss:// tests, with a
# throwaway CA made now (nothing is kept after the run).
#   tls_servers   makes the certificates in $dir/tls and starts the two
#   servers, auth-tls/ and auth-mtls/ (scripts/lib/redis-servers.sh; with-redis
#   awaits them)
# Exports RL_TEST_TLS_DIR (ca.pem, other-ca.pem, client.pem, client.key, and
# stranger.pem, stranger.key: a client certificate of other-ca),
# RL_TEST_REDISS_PORT (server certificate for localhost and 127.0.0.1; client
# certificates not asked for) and RL_TEST_REDISS_MTLS_PORT (client
# certificates signed by the CA required).

# make_cert DIR NAME CA SUBJECT_ALT_NAME: NAME.pem and NAME.key signed by CA.
make_cert() {
  local d=$1 name=$2 ca=$3 san=$4
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$d/$name.key" -out "$d/$name.csr" -subj "/CN=$name" 2>/dev/null
  printf 'subjectAltName=%s\n' "$san" >"$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.pem" -CAkey "$d/$ca.key" -CAcreateserial \
    -days 1 -extfile "$d/$name.ext" -out "$d/$name.pem" 2>/dev/null
}

make_ca() {
  local d=$1 name=$2
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$d/$name.key" -out "$d/$name.pem" -subj "/CN=rl test $name" 2>/dev/null
}

# tls_server NAME PORT: the server spec (redis-servers.sh) of auth-tls and
# auth-mtls, TLS only (port 0); auth-mtls asks for client certificates.
tls_server() {
  local d="$dir/$1" clients=no
  [ "$1" = auth-mtls ] && clients=yes
  spec_dir=$d
  spec_ports="tls-port $2"
  spec_args=(--port 0 --tls-port "$2" --bind 127.0.0.1 --save '' --appendonly no
    --pidfile "$d/redis.pid" --logfile "$d/redis.log" --dir "$d"
    --tls-cert-file "$RL_TEST_TLS_DIR/server.pem" --tls-key-file "$RL_TEST_TLS_DIR/server.key"
    --tls-ca-cert-file "$RL_TEST_TLS_DIR/ca.pem" --tls-auth-clients "$clients")
}

tls_servers() {
  local d="$dir/tls"
  mkdir -p "$d"
  make_ca "$d" ca
  make_ca "$d" other-ca
  make_cert "$d" server ca "DNS:localhost,IP:127.0.0.1"
  make_cert "$d" client ca "DNS:rl-client"
  make_cert "$d" stranger other-ca "DNS:rl-client"
  export RL_TEST_TLS_DIR="$d"
  server auth-tls 1 tls_server
  server auth-mtls 1 tls_server
  export RL_TEST_REDISS_PORT="${srv_ports[auth-tls]}"
  export RL_TEST_REDISS_MTLS_PORT="${srv_ports[auth-mtls]}"
}
