#!/usr/bin/env bash
# The load race: hatshop's initial load at its defaults beside each store's own load
# tool, on the same server and the same row count, the two alternating who goes first.
#
#   bench/load-race.sh [--rows 1000000] [--repeats 3]
#                      [--stores "postgres mariadb redis cassandra"] [--bin PATH]
#
# --bin races a hatshop binary built before (default: the release build, built first).
#
# The peers, as their users load with them, at their defaults:
#   PostgreSQL  pgbench -i -s ROWS/100000 (pgbench_accounts, COPY, then VACUUM and the
#               primary key); hatshop: race-pg-select's records (kv_table=pgbench_accounts)
#   MariaDB     sysbench oltp_point_select prepare --table-size=ROWS (multi-row INSERTs
#               into sbtest1); hatshop: race-sql-select's records (kv_table=sbtest)
#   Redis       redis-cli --pipe of ROWS SETs of 100-byte values, the file made before
#               the clock starts; hatshop: race-redis-set's records
#   Cassandra   latte load of bench/race/kv.rn (text key, 100-byte blob) at latte's
#               defaults; hatshop: race-cql-read's records at CL ONE
# Each tool runs as a whole process, timed by GNU time: wall time, client CPU (user +
# system) and peak RSS; hatshop's process also connects, makes its tables, measures
# one event and (PostgreSQL) vacuums, and the peers' also make their tables and
# (pgbench) build the key afterwards. hatshop's own reading of its load (run.json's
# unmeasured.load) is printed beside. Each row of the table is the median of the
# rounds. Servers come from `hatshop server start` under $HATSHOP_HOME (reused when
# running); latte is installed from crates.io when missing, as bench/race.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."

rows=1000000
repeats=3
stores="postgres mariadb redis cassandra"
bin=
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --stores) stores=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "load-race: unknown argument $1 (see the top of bench/load-race.sh)" >&2; exit 2 ;;
  esac
done
if [ $((rows % 100000)) -ne 0 ]; then
  echo "load-race: --rows must be a multiple of 100000 (pgbench loads scale × 100,000 rows)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap '[ -n "${RACE_KEEP:-}" ] || rm -rf "$tmp"' EXIT
wants() { [[ " $stores " == *" $1 "* ]]; }
step() { printf '== %s\n' "$*" >&2; }

step "installing what is missing"
missing=()
[ -x /usr/bin/time ] || missing+=(time)
# The servers too: hatshop starts them, but a fresh machine has none installed.
wants mariadb && { command -v sysbench >/dev/null || missing+=(sysbench); }
wants mariadb && { [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server); }
wants postgres && { command -v pgbench >/dev/null || missing+=(postgresql postgresql-contrib); }
wants redis && { command -v redis-cli >/dev/null || missing+=(redis-tools); }
wants redis && { command -v redis-server >/dev/null || missing+=(redis-server); }
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if wants cassandra; then
  command -v latte >/dev/null || cargo install latte-cli --version 0.29.0 --locked
fi
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet
  bin=target/release/hatshop
fi

# The server's URL, started if it is not running.
start() { "$bin" server start "$1" 2>"$tmp/$1.log" || { cat "$tmp/$1.log" >&2; exit 1; }; }

# Runs a command as a whole process: "wall_s cpu_s rss_mb" on stdout, its output in
# $tmp/out; a failure shows that output and ends the race.
timed() {
  if ! /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>&1; then
    cat "$tmp/out" >&2
    echo "load-race: failed: $*" >&2
    exit 1
  fi
  awk '{ printf "%.3f %.3f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$tmp/time"
}

# hatshop's own reading of its last load, rows/s.
own_rate() {
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["unmeasured"]["load"]["rows_per_s"]))' "$tmp/h/run.json"
}

# race NAME PREPARE_PEER PEER... -- HATSHOP_ARGS...: REPEATS rounds, alternating who
# goes first; then the table of medians.
race() {
  local name=$1 prepare=$2
  shift 2
  local peer=() hat=()
  while [ "$1" != -- ]; do peer+=("$1"); shift; done
  shift
  hat=("$@")
  : >"$tmp/$name.rows"
  for round in $(seq 1 "$repeats"); do
    for who in $( ((round % 2)) && echo "peer hatshop" || echo "hatshop peer"); do
      if [ "$who" = peer ]; then
        "$prepare"
        printf 'peer %s -\n' "$(timed "${peer[@]}")" >>"$tmp/$name.rows"
      else
        rm -rf "$tmp/h"
        local measured
        measured=$(timed "$bin" run --quiet --events 1 --warmup 0 -o "$tmp/h" "${hat[@]}")
        printf 'hatshop %s %s\n' "$measured" "$(own_rate)" >>"$tmp/$name.rows"
      fi
    done
  done
  printf '\n%s, %s rows, median of %s rounds\n' "$name" "$rows" "$repeats"
  printf '%-8s %12s %9s %14s %8s %15s\n' tool rows/s wall_s "cpu µs/row" rss_MB "own load rows/s"
  for tool in peer hatshop; do
    awk -v t="$tool" -v n="$rows" '$1 == t { print n / $2, $2, $3 * 1e6 / n, $4, $5 }' "$tmp/$name.rows" |
      sort -n | awk -v t="$tool" '{ r[NR] = $0 } END { split(r[int((NR + 1) / 2)], m, " ");
        printf "%-8s %12.0f %9.2f %14.2f %8.0f %15s\n", t, m[1], m[2], m[3], m[4], m[5] }'
  done | tee "$tmp/$name.table"
  awk 'NR == 1 { r = $2; c = $4 } NR == 2 { printf "hatshop ÷ peer: %.2f× the rows/s at %.2f× the client CPU per row\n", $2 / r, $4 / c }' "$tmp/$name.table"
  printf 'peer:    %s\nhatshop: %s run --quiet --events 1 --warmup 0 -o DIR %s\n' "${peer[*]}" "$bin" "${hat[*]}"
}

nothing() { :; }

if wants postgres; then
  step "PostgreSQL"
  pg=$(start postgres)
  pg=${pg%%\?*}
  pg_host=${pg#*@}
  pg_host=${pg_host%%/*}
  psql "${pg%/*}/postgres" -qc 'CREATE DATABASE load_race' 2>/dev/null || true
  race postgres nothing \
    pgbench -i -s $((rows / 100000)) -h "${pg_host%:*}" -p "${pg_host#*:}" -U postgres load_race -- \
    -w race-pg-select --records "$rows" --db "$pg?kv_table=pgbench_accounts"
fi

if wants mariadb; then
  step "MariaDB"
  my=$(start mariadb)
  my=${my%%\?*}
  my_host=${my#*@}
  my_host=${my_host%%/*}
  mariadb -h "${my_host%:*}" -P "${my_host#*:}" -u root -e 'CREATE DATABASE IF NOT EXISTS load_race'
  sysbench_args=(oltp_point_select --db-driver=mysql --mysql-host="${my_host%:*}"
    --mysql-port="${my_host#*:}" --mysql-user=root --mysql-db=load_race --tables=1
    --table-size="$rows")
  sysbench_cleanup() { sysbench "${sysbench_args[@]}" cleanup >/dev/null; }
  race mariadb sysbench_cleanup sysbench "${sysbench_args[@]}" prepare -- \
    -w race-sql-select --records "$rows" --db "$my?kv_table=sbtest"
  sysbench_cleanup
fi

if wants redis; then
  step "Redis"
  rd=$(start redis)
  rd_host=${rd#redis://}
  rd_host=${rd_host%%/*}
  # The mass-insertion file: SETs of hatshop's key shape and 100-byte values.
  python3 - "$rows" >"$tmp/redis.resp" <<'PY'
import sys
out = sys.stdout.buffer
value = b"v" * 100
for i in range(int(sys.argv[1])):
    key = b"load:%016x" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$100\r\n%s\r\n" % (len(key), key, value))
PY
  redis_flush() { redis-cli -h "${rd_host%:*}" -p "${rd_host#*:}" flushdb >/dev/null; }
  race redis redis_flush \
    sh -c "redis-cli -h ${rd_host%:*} -p ${rd_host#*:} --pipe <$tmp/redis.resp" -- \
    -w race-redis-set --records "$rows" --db "$rd"
  redis_flush
fi

if wants cassandra; then
  step "Cassandra"
  cql=$(start cassandra)
  cql_host=${cql#cassandra://}
  cql_host=${cql_host%%/*}
  latte_schema() { env -C "$tmp" latte schema "$PWD/bench/race/kv.rn" "$cql_host" >/dev/null 2>&1; }
  race cassandra latte_schema \
    env -C "$tmp" latte load "$PWD/bench/race/kv.rn" -P rows="$rows" "$cql_host" -- \
    -w race-cql-read --records "$rows" --db "${cql%%\?*}?cl=ONE"
fi
