#!/usr/bin/env bash
# Servers set up as an admin sets up production ones, by hand and not by hatshop: a CA
# of their own (openssl), TLS required, and users that log in with a password.
#
#   tests/servers/secure.sh start DIR    prints the environment the live tests read
#   tests/servers/secure.sh stop DIR
#
# PostgreSQL 15: ssl on, hostssl lines only; `bench` logs in with SCRAM-SHA-256 and
# `bench_md5` with MD5. MariaDB: require_secure_transport; `bench_ed` logs in with
# ed25519 and `bench_native` with mysql_native_password. Redis: the TLS port alone, the
# default user off, `bench` an ACL user. Each on 127.0.0.1 at a port of its own.
# DIR also holds a second CA that signed nothing the servers use (a wrong CA); two more
# Redis servers present a certificate made out to another name and one that expired,
# for the tests that try them.
set -euo pipefail
action=${1:?start or stop}
dir=${2:?a folder}
pg_port=${SECURE_PG_PORT:-5442}
my_port=${SECURE_MYSQL_PORT:-3316}
redis_port=${SECURE_REDIS_PORT:-6390}
password=${SECURE_PASSWORD:-s3cret-Pw}
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

stop() {
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    runuser -u postgres -- "$pg_bin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  for pidfile in "$dir/mysql/mariadbd.pid" "$dir"/redis*/redis.pid; do
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
    fi
  done
  for _ in $(seq 50); do
    [ -e "$dir/mysql/mariadbd.pid" ] || [ -e "$dir/redis/redis.pid" ] || break
    sleep 0.1
  done
}

certificates() {
  local certs=$dir/certs
  mkdir -p "$certs"
  cd "$certs"
  # The CA, and a server certificate for 127.0.0.1 and localhost it signed.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=hatshop test CA" -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile server.ext -out server.pem 2>/dev/null
  # A client certificate the CA signed.
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=bench" \
    -keyout client.key -out client.csr 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >client.ext
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile client.ext -out client.pem 2>/dev/null
  # A CA that signed none of these.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=another CA" -keyout other-ca.key -out other-ca.pem 2>/dev/null
  # Made out to another name, and expired (valid for one second, a year ago), both by the CA.
  printf 'subjectAltName=DNS:db.example.com\n' >other-name.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile other-name.ext -out other-name.pem 2>/dev/null
  touch index.txt
  echo 1000 >serial
  printf '[ca]\ndefault_ca=test\n[test]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=any\ncopy_extensions=copy\n[any]\ncommonName=supplied\n' >ca.cnf
  openssl ca -batch -notext -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr \
    -startdate 20250101000000Z -enddate 20250102000000Z -extfile server.ext \
    -out expired.pem 2>/dev/null
  chmod 644 ./*.pem ./*.key
  cd - >/dev/null
}

start_postgres() {
  local d=$dir/pg
  mkdir -p "$d"
  cp "$dir/certs/server.pem" "$dir/certs/server.key" "$dir/certs/ca.pem" "$d/"
  chown -R postgres: "$d"
  chmod 600 "$d/server.key"
  runuser -u postgres -- "$pg_bin/initdb" -D "$d/data" -A trust -U postgres --no-sync >"$d/initdb.log"
  cat >>"$d/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$d'
ssl = on
ssl_cert_file = '$d/server.pem'
ssl_key_file = '$d/server.key'
ssl_ca_file = '$d/ca.pem'
password_encryption = 'scram-sha-256'
fsync = off
EOF
  # TLS or nothing over TCP; the superuser only on the server's own socket.
  cat >"$d/data/pg_hba.conf" <<EOF
local all postgres trust
hostssl all bench_md5 127.0.0.1/32 md5
hostssl all all 127.0.0.1/32 scram-sha-256
EOF
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null
  local psql=(runuser -u postgres -- psql -h "$d" -p "$pg_port" -U postgres -qX -v ON_ERROR_STOP=1)
  "${psql[@]}" -c "CREATE ROLE bench LOGIN PASSWORD '$password'" \
    -c "SET password_encryption = 'md5'" -c "CREATE ROLE bench_md5 LOGIN PASSWORD '$password'" \
    -c "CREATE DATABASE hatshop OWNER bench" -c "CREATE DATABASE hatshop_md5 OWNER bench_md5"
}

start_mariadb() {
  local d=$dir/mysql
  mkdir -p "$d"
  cp "$dir/certs/server.pem" "$dir/certs/server.key" "$dir/certs/ca.pem" "$d/"
  chown -R mysql: "$d"
  mariadb-install-db --user=mysql --datadir="$d/data" --auth-root-authentication-method=socket \
    --skip-test-db >"$d/install.log" 2>&1
  mariadbd --no-defaults --user=mysql --datadir="$d/data" --bind-address=127.0.0.1 \
    --port="$my_port" --socket="$d/mysql.sock" --pid-file="$d/mariadbd.pid" \
    --log-error="$d/error.log" --plugin-load-add=auth_ed25519 \
    --ssl-ca="$d/ca.pem" --ssl-cert="$d/server.pem" --ssl-key="$d/server.key" \
    --require-secure-transport=ON --innodb-flush-log-at-trx-commit=0 >"$d/stdout.log" 2>&1 &
  for _ in $(seq 100); do
    mariadb --no-defaults -S "$d/mysql.sock" -u root -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.1
  done
  mariadb --no-defaults -S "$d/mysql.sock" -u root <<EOF
CREATE DATABASE hatshop;
CREATE USER bench_ed@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('$password');
CREATE USER bench_native@'127.0.0.1' IDENTIFIED BY '$password';
GRANT ALL ON hatshop.* TO bench_ed@'127.0.0.1';
GRANT ALL ON hatshop.* TO bench_native@'127.0.0.1';
GRANT SELECT ON performance_schema.* TO bench_ed@'127.0.0.1';
EOF
}

# start_redis NAME PORT CERT: a Redis on the TLS port alone, presenting CERT.
start_redis() {
  local d=$dir/$1
  mkdir -p "$d"
  cat >"$d/redis.conf" <<EOF
bind 127.0.0.1
port 0
tls-port $2
tls-cert-file $dir/certs/$3
tls-key-file $dir/certs/server.key
tls-ca-cert-file $dir/certs/ca.pem
tls-auth-clients optional
dir $d
pidfile $d/redis.pid
save ""
daemonize yes
logfile $d/redis.log
user default off
user bench on >$password ~* &* +@all
EOF
  redis-server "$d/redis.conf"
  for _ in $(seq 50); do
    [ -e "$d/redis.pid" ] && break
    sleep 0.1
  done
}

case $action in
  start)
    stop
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 755 "$dir"
    certificates
    start_postgres
    start_mariadb
    start_redis redis "$redis_port" server.pem
    start_redis redis-other-name $((redis_port + 1)) other-name.pem
    start_redis redis-expired $((redis_port + 2)) expired.pem
    ca=$dir/certs/ca.pem
    echo "HATSHOP_TEST_SECURE_CERTS=$dir/certs"
    echo "HATSHOP_TEST_SECURE_PASSWORD=$password"
    echo "HATSHOP_TEST_SECURE_PG=postgres://bench@127.0.0.1:$pg_port/hatshop?sslmode=verify-full&sslrootcert=$ca"
    echo "HATSHOP_TEST_SECURE_MYSQL=mysql://bench_ed@127.0.0.1:$my_port/hatshop?ssl-mode=VERIFY_IDENTITY&ssl-ca=$ca"
    echo "HATSHOP_TEST_SECURE_REDIS=rediss://bench@127.0.0.1:$redis_port/0?cacert=$ca"
    echo "HATSHOP_TEST_SECURE_REDIS_OTHER_NAME=rediss://bench@127.0.0.1:$((redis_port + 1))/0?cacert=$ca"
    echo "HATSHOP_TEST_SECURE_REDIS_EXPIRED=rediss://bench@127.0.0.1:$((redis_port + 2))/0?cacert=$ca"
    ;;
  stop) stop ;;
  *) echo "secure.sh: start or stop" >&2; exit 2 ;;
esac
