# Sourced by scripts/with-redis: TLS servers for the rediss:// tests, with a
# throwaway CA made now (nothing is kept after the run).
#   tls_servers DIR   (needs free_port and auth_server from with-redis)
# Exports RL_TEST_TLS_DIR (ca.pem, other-ca.pem, client.pem, client.key),
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

tls_servers() {
  local d="$1/tls"
  mkdir -p "$d"
  make_ca "$d" ca
  make_ca "$d" other-ca
  make_cert "$d" server ca "DNS:localhost,IP:127.0.0.1"
  make_cert "$d" client ca "DNS:rl-client"
  local tls_args=(--tls-cert-file "$d/server.pem" --tls-key-file "$d/server.key"
    --tls-ca-cert-file "$d/ca.pem")
  local p m
  p=$(free_port)
  auth_server tls --port 0 --tls-port "$p" "${tls_args[@]}" --tls-auth-clients no >/dev/null
  m=$(free_port)
  auth_server mtls --port 0 --tls-port "$m" "${tls_args[@]}" --tls-auth-clients yes >/dev/null
  for port in "$p" "$m"; do
    for _ in $(seq 100); do
      redis-cli --tls --cacert "$d/ca.pem" --cert "$d/client.pem" --key "$d/client.key" \
        -p "$port" ping 2>/dev/null | grep -q PONG && break
      sleep 0.05
    done
  done
  export RL_TEST_TLS_DIR="$d"
  export RL_TEST_REDISS_PORT="$p"
  export RL_TEST_REDISS_MTLS_PORT="$m"
}
