#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what is missing (Debian packages,
# Galera among them, Cassandra's jars from Maven Central, Chromium for the report test,
# Prometheus for the metrics test),
# starts Cassandra, MariaDB, PostgreSQL, Redis and a 3-node Project Voldemort (built
# from source) with `hatshop server start`, and a PostgreSQL, a MariaDB and Redis set
# up by hand with TLS required and password logins (tests/servers/secure.sh), runs
# formatting, lints and every test (the live-server tests included; the cluster tests
# start a 3-node Cassandra ring and a 3-node Galera cluster of their own), reads the op
# log with pandas, polars and DuckDB (from PyPI, in a virtualenv), and stops the
# servers at the end, also on failure. Each stage prints its start time; the last line
# the total.
set -euo pipefail
cd "$(dirname "$0")"

suite_started=$(date +%s)
step() { printf '\n== %s (%s, +%ss)\n' "$*" "$(date +%T)" "$(($(date +%s) - suite_started))"; }

# Tables are cut to $COLUMNS where it is set; the tests read them whole.
unset COLUMNS
# Servers and downloads of the test suite live apart from a user's own.
export HATSHOP_HOME=${HATSHOP_TEST_HOME:-${HOME:-/tmp}/.local/share/hatshop-test}
# The servers set up by hand with TLS and password logins (tests/servers/secure.sh);
# under /var/tmp, where PostgreSQL's own user can reach them.
secure_dir=/var/tmp/hatshop-test-secure

# One suite at a time on these servers: a second would share their tables, and the
# first to end would stop them under the other. A later suite waits, 45 minutes at most.
mkdir -p "$HATSHOP_HOME"
suite_lock="$HATSHOP_HOME/suite.pid"
waited=0
# A pid left by a suite killed outright counts only while it is still a test.sh.
while other=$(cat "$suite_lock" 2>/dev/null) && [ "$other" != $$ ] &&
  grep -qs test.sh "/proc/$other/cmdline"; do
  if [ "$waited" -ge 2700 ]; then
    echo "error: the test suite of pid $other still uses the servers in $HATSHOP_HOME after 45 minutes" >&2
    exit 1
  fi
  [ "$waited" -eq 0 ] && echo "the test suite of pid $other uses the servers in $HATSHOP_HOME: waiting for it to end"
  sleep 10
  waited=$((waited + 10))
done
echo $$ >"$suite_lock"
trap 'rm -f "$suite_lock"' EXIT

step "toolchain and packages"
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed (install Rust with rustup first)" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
missing=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
[ -e /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4)
command -v mariabackup >/dev/null 2>&1 || missing+=(mariadb-backup)
command -v socat >/dev/null 2>&1 || missing+=(socat)
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: missing ${missing[*]}: run 'sudo apt-get update && sudo apt-get install -y ${missing[*]}'" >&2
    exit 1
  fi
  echo "installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
cargo --version

step "build"
# A one-off build (CI's fresh clone) gains nothing from incremental state or a
# debugger's full debug info (backtraces keep file and line): without them the target
# folder is a fraction of the size on disk.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only
fi
cargo build --locked --all-targets
hatshop=target/debug/hatshop

step "servers"
# Fresh data every time; the Cassandra jars stay in the cache.
"$hatshop" server wipe --all
trap '"$hatshop" server stop --all || true; tests/servers/secure.sh stop "$secure_dir" || true; rm -f "$suite_lock"' EXIT
# Cassandra takes the longest: it boots while formatting and lints run. The bulk
# load test sends seed 002's 10,000-row batches (3 MB by Cassandra's count).
"$hatshop" server start cassandra --set batch_size_fail_threshold=4MiB >target/cassandra-url.txt 2>target/cassandra-start.log &
cassandra_pid=$!
HATSHOP_TEST_MYSQL=$("$hatshop" server start mariadb)
HATSHOP_TEST_POSTGRES=$("$hatshop" server start postgres)
HATSHOP_TEST_REDIS=$("$hatshop" server start redis)
# Built from the upstream archive hatshop carries (javac, jars from Maven Central).
HATSHOP_TEST_VOLDEMORT=$("$hatshop" server start voldemort --nodes 3)
export HATSHOP_TEST_MYSQL HATSHOP_TEST_POSTGRES HATSHOP_TEST_REDIS HATSHOP_TEST_VOLDEMORT
# PostgreSQL, MariaDB and Redis as an admin sets them up: a CA of their own, TLS
# required, password logins (SCRAM, MD5, ed25519, native, a Redis ACL user).
secure_env=$(tests/servers/secure.sh start "$secure_dir")
while IFS= read -r line; do export "$line"; done <<<"$secure_env"

# HdrHistogram's own log processor reads latency.hlog in a test.
m2_repo="${HOME:-/root}/.m2/repository"
hdr_jar="$m2_repo/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar"
[ -e "$hdr_jar" ] || mvn -q -B -Dmaven.repo.local="$m2_repo" dependency:get \
  -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2
HATSHOP_TEST_HDRHISTOGRAM_JAR=$hdr_jar
export HATSHOP_TEST_HDRHISTOGRAM_JAR

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --locked --all-targets -- -D warnings

step "waiting for Cassandra"
if ! wait "$cassandra_pid"; then
  cat target/cassandra-start.log >&2
  exit 1
fi
cat target/cassandra-start.log
HATSHOP_TEST_CASSANDRA=$(cat target/cassandra-url.txt)
export HATSHOP_TEST_CASSANDRA
"$hatshop" server status

step "cargo test (live-server tests included)"
cargo test --locked --all-targets -- --include-ignored

step "the op log read by pandas, polars and DuckDB"
# The libraries users open the op log with, pinned, in a virtualenv of the suite's own.
readers=target/oplog-readers
[ -x "$readers/bin/python" ] || python3 -m venv "$readers"
"$readers/bin/pip" install -q --disable-pip-version-check \
  pandas==3.1.1 pyarrow==26.0.1 polars==2.1.0 duckdb==2.0.1
"$readers/bin/python" tests/oplog_readers.py "$hatshop"

step "done"
