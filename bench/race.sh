#!/usr/bin/env bash
# The performance race: hatshop at its defaults against each store's own standard
# tool, on the same work and the same server, at each in-flight count, hatshop and
# the peer alternating who goes first.
#
#   bench/race.sh [--conns 1,8,32,128,256] [--repeats 3] [--ops 200000]
#                 [--stores "cassandra mariadb postgres redis voldemort"] [--tls]
#
# --tls races on the setup users have: servers started with `hatshop server start
# --tls` (in a home of their own, $HATSHOP_HOME-tls) and users that log in with a
# password, both tools over TLS: PostgreSQL as a SCRAM-SHA-256 user (pgbench and
# hatshop with sslmode=require), MariaDB as a mysql_native_password user (sysbench
# --mysql-ssl=on, whose client library cannot open many ed25519 logins at once;
# hatshop with ssl-mode=REQUIRED), Redis as an ACL user (redis-benchmark --tls,
# hatshop over rediss://). Cassandra and Voldemort are left out: latte's TLS needs a
# build of its own, and Voldemort's protocol has no TLS.
#
# The peers, installed when missing: latte 0.29 from crates.io (Cassandra: inserts and
# point reads at CL ONE), sysbench (MariaDB: oltp_point_select and oltp_insert on the
# sbtest shape), pgbench (PostgreSQL: -S -M prepared at scale 1, on the pgbench_accounts
# shape), redis-benchmark (Redis: GET and SET of 100-byte values over 100,000 keys,
# -P 1) and Voldemort's own performance tool (voldemort.performance.benchmark.Benchmark:
# reads of 100-byte values over the 100,000 records its warm-up writes), built from the
# upstream archive in vendor/voldemort/ against the classes and jars of the Voldemort
# hatshop built. Each hatshop race preset does the peer's work and says so in its
# description (`hatshop workloads`).
#
# Servers come from `hatshop server start` under $HATSHOP_HOME (reused when running).
# Each race runs unrecorded rounds until the server is warm (both tools' throughput
# together within a tenth of the round before, at most RACE_WARM_MAX rounds, 6 unless
# set; the output says how many it took, or that the server never settled), then
# REPEATS recorded rounds per in-flight count. One table per race: per count, the
# medians of ops/s, p50 and p99 (µs), client CPU µs/op (user + system of the client ÷
# ops), client peak RSS, server CPU µs/op (/proc of the server process), and hatshop ÷
# peer; then the floor, what the store's own client code costs per read with nothing
# around it (bench/floor.rs, on one runtime thread, on a runtime of one thread per
# core, and spread over a thread per core with an event loop each); then, where both
# tools ran two rounds or more with the server's CPU read, hatshop ÷ peer in client CPU
# per operation at the same server CPU per operation: a round's client CPU follows what
# the server spent on it that round (on two shared cores the server's cost per
# operation moves by more than the tools' gap between rounds), so both tools' long
# rounds are fitted as client = a + b × server, one slope for both, and read at the
# median server figure (? when a tool's rounds, moved along the slope to it, still
# spread by more than a quarter of their median). The command lines are printed first.
#
# Where the numbers come from: a peer's CPU and RSS are its whole process (GNU time);
# its server CPU is the server's /proc delta around it, less what the same command
# with one operation per connection cost the server (its connections and start-up:
# 256 new PostgreSQL backends cost it about 1.1 s, bench/NOTES.md), measured once per
# count. hatshop's CPU and server CPU are its measured window (run.json `client`,
# `server_cpu`), since its read races load their rows in the same process (the peers
# load theirs in a separate command); its RSS is the whole process. The steady columns
# count both tools the same way: each round is run again with a quarter of the
# operations, and the whole process's CPU (and the server's around it) of the long
# rounds less the short ones, per operation between them, leaves out start-up, row
# loading and warm-up alike; a steady figure is marked ? when it rests on too little
# (one round, or rounds whose own long-less-short figures spread by more than a quarter
# of the median). hatshop runs with no tuning flag: `-c` is the in-flight count being
# compared.
set -euo pipefail
cd "$(dirname "$0")/.."

conns=1,8,32,128,256
repeats=3
ops=200000
stores="cassandra mariadb postgres redis voldemort"
tls=
while [ $# -gt 0 ]; do
  case $1 in
    --tls) tls=1; shift ;;
    --conns) conns=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --stores) stores=$2; shift 2 ;;
    *) echo "race: unknown argument $1 (see the top of bench/race.sh)" >&2; exit 2 ;;
  esac
done
IFS=, read -ra counts <<<"$conns"
if [ -n "$tls" ]; then
  stores=$(tr ' ' '\n' <<<"$stores" | grep -Ex 'mariadb|postgres|redis' | tr '\n' ' ')
fi
# The most unrecorded warm-up rounds a race runs before it is recorded (warm_up).
warm_max=${RACE_WARM_MAX:-6}
# The short round's operations: a quarter of a long round's.
short=$((ops / 4 > 0 ? ops / 4 : 1))
export HATSHOP_HOME=${HATSHOP_HOME:-$HOME/.local/share/hatshop}
# Servers with TLS live apart: a server runs with TLS or without.
[ -z "$tls" ] || HATSHOP_HOME=$HATSHOP_HOME-tls
# The password of the users the --tls races log in as.
race_pw=Race-pass-1
# The longest one measured command may take (RACE_TIMEOUT seconds): a silent server
# ends the script instead of holding it.
limit=${RACE_TIMEOUT:-900}
# bounded COMMAND…: runs COMMAND within the limit, its output in $tmp/out; a command
# that fails or outlives the limit shows that output and ends the script.
bounded() {
  timeout "$limit" "$@" >"$tmp/out" 2>&1 || {
    cat "$tmp/out" >&2
    exit 1
  }
}
tmp=$(mktemp -d)
trap '[ -n "${RACE_KEEP:-}" ] || rm -rf "$tmp"' EXIT
wants() { [[ " $stores " == *" $1 "* ]]; }
step() { printf '== %s\n' "$*" >&2; }

step "installing what is missing"
missing=()
[ -x /usr/bin/time ] || missing+=(time)
if wants cassandra; then
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null || missing+=(maven) # hatshop fetches Cassandra's jars with it
fi
if wants mariadb; then
  command -v sysbench >/dev/null || missing+=(sysbench)
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
fi
wants postgres && { command -v pgbench >/dev/null || missing+=(postgresql postgresql-contrib); }
wants redis && { command -v redis-benchmark >/dev/null || missing+=(redis-server redis-tools); }
if wants voldemort; then
  command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless) # hatshop builds Voldemort with it
  command -v mvn >/dev/null || missing+=(maven)                     # and fetches its jars with this
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if wants cassandra; then
  command -v latte >/dev/null || cargo install latte-cli --version 0.29.0 --locked
fi
cargo build --release --locked --quiet
cargo build --release --locked --quiet --example floor
bin=target/release/hatshop
floor=target/release/examples/floor

# start NAME: the server's URL on stdout; its pid in $tmp/NAME.pid.
start() {
  local url
  url=$("$bin" server start "$1" ${tls:+--tls} 2>"$tmp/$1.log") || { cat "$tmp/$1.log" >&2; exit 1; }
  sed -n 's/.*(pid \([0-9]*\)).*/\1/p' "$tmp/$1.log" | head -1 >"$tmp/$1.pid"
  [ -s "$tmp/$1.pid" ] || { echo "race: no pid for $1 in: $(cat "$tmp/$1.log")" >&2; exit 1; }
  echo "$url"
}
# param URL KEY: the value of ?KEY= in URL.
param() { sed -nE "s#.*[?&]$2=([^&]*).*#\1#p" <<<"$1"; }
# host_port URL: "HOST PORT" of a server URL's first host.
host_port() { sed -E 's#^[a-z]+://([^@/]*@)?([^:/,]+):([0-9]+).*#\2 \3#' <<<"$1"; }

# cpu_s PID: CPU seconds of a server with its children (PostgreSQL's backends), live
# or reaped (fields 16 and 17 of the parent).
cpu_s() {
  local children
  children=$(pgrep -P "$1" | sed 's#.*#/proc/&/stat#' || true)
  # cat passes over a child that ended meanwhile (and its failure is not the
  # script's); the parent's line comes first.
  # shellcheck disable=SC2086 # one path per child
  { cat "/proc/$1/stat" $children 2>/dev/null || true; } | awk 'NR == 1 { s += $16 + $17 } { s += $14 + $15 } END { print s / 100 }'
}

# The peer's server CPU spent on its connections and start-up, in seconds, taken off
# its server CPU in measure_peer: hatshop's measured window leaves its own out. Set by
# peer_setup for each in-flight count.
peer_setup_s=0

# peer_setup SERVER_PID COMMAND_FN COUNT: sets peer_setup_s to the server CPU of the
# peer's command at COUNT in flight with one operation per connection (its output,
# and any log files it left, are dropped).
peer_setup() {
  local server=$1 command=$2 count=$3 all=$ops before after
  ops=$count
  "$command" "$count"
  ops=$all
  before=$(cpu_s "$server")
  bounded "${peer[@]}"
  after=$(cpu_s "$server")
  rm -f "$tmp"/pgbench_log.*
  peer_setup_s=$(awk -v b="$before" -v a="$after" 'BEGIN { print a - b }')
}

# measure_peer SERVER_PID PARSER COMMAND…: one line "ops_s p50 p99 cpu_us rss_mb
# server_us whole_cpu_s ops whole_server_s"; server_us leaves out peer_setup_s;
# whole_cpu_s and whole_server_s are the client's and the server's CPU over the whole
# command, for the steady-state columns.
measure_peer() {
  local server=$1 parse=$2
  shift 2
  local before after
  before=$(cpu_s "$server")
  bounded /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@"
  after=$(cpu_s "$server")
  read -r user sys rss <"$tmp/time"
  read -r ops_s p50 p99 < <("$parse" "$tmp/out")
  awk -v o="$ops_s" -v a="$p50" -v b="$p99" -v u="$user" -v s="$sys" -v r="$rss" -v n="$ops" \
    -v sb="$before" -v sa="$after" -v setup="$peer_setup_s" \
    'BEGIN { printf "%.0f %.1f %.1f %.2f %.1f %.2f %.3f %d %.3f\n", o, a, b, (u + s) * 1e6 / n, r / 1024, (sa - sb - setup) * 1e6 / n, u + s, n, sa - sb }'
}

# Voldemort's Benchmark prints "[benchmark]<TAB>Throughput(ops/sec): N" and, per
# operation kind, "[reads]<TAB>Median(ms): N" and "[reads]<TAB>99th(ms): N" (whole ms).
parse_vold_benchmark() {
  awk -F'\t' '$1 == "[benchmark]" && $2 ~ /^Throughput/ { split($2, a, ": "); t = a[2] }
               $1 == "[reads]" && $2 ~ /^Median/ { split($2, a, ": "); p50 = a[2] * 1000 }
               $1 == "[reads]" && $2 ~ /^99th/ { split($2, a, ": "); p99 = a[2] * 1000 }
               END { print t, p50, p99 }' "$1"
}

# latte prints "Throughput [op/s] N ± …" and a CYCLE LATENCY ladder in ms.
parse_latte() {
  awk '/Throughput/ && /op\/s/ { t = $3 }
       /CYCLE LATENCY/ { l = 1 }
       l && $1 == "50" { p50 = $2 * 1000 }
       l && $1 == "99" { p99 = $2 * 1000 }
       END { print t, p50, p99 }' "$1"
}

# sysbench prints "queries: N (R per sec.)", the 99th percentile and, with
# --histogram, the latency histogram (ms) from which p50 is read.
parse_sysbench() {
  awk '/queries:/ { gsub(/\(/, "", $3); r = $3 }
       /99th percentile:/ { p99 = $3 * 1000 }
       /^ +[0-9.]+ \|/ { v[n] = $1; c[n] = $NF; total += $NF; n++ }
       END { half = total / 2; for (i = 0; i < n; i++) { s += c[i]; if (s >= half) { p50 = v[i] * 1000; break } }
             print r, p50, p99 }' "$1"
}

# pgbench prints "tps = N (without initial connection time)"; with -l each
# transaction's latency (µs, the third field) is in its log files, read for p50 and p99.
parse_pgbench() {
  python3 - "$1" "$tmp" <<'EOF'
import glob, re, sys
text = open(sys.argv[1]).read()
tps = float(re.search(r"tps = ([0-9.]+) \(without initial connection time\)", text).group(1))
lat = sorted(int(line.split()[2]) for f in glob.glob(f"{sys.argv[2]}/pgbench_log.*") for line in open(f))
print(tps, lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))])
EOF
  rm -f "$tmp"/pgbench_log.*
}

# redis-benchmark --csv: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
# "p95_latency_ms","p99_latency_ms","max_latency_ms".
parse_redis_benchmark() {
  tr -d '"' <"$1" | awk -F, '$1 == "GET" || $1 == "SET" { print $2, $5 * 1000, $7 * 1000 }'
}

# measure_hatshop PRESET URL CONNS SERVER_PID: the same line, from run.json and
# summary.json, and the whole process's CPU and the server's around it, as the peer's.
measure_hatshop() {
  local out="$tmp/hatshop-$RANDOM$RANDOM" before after
  before=$(cpu_s "$4")
  bounded /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$bin" run --quiet -w "$1" --events "$ops" -c "$3" --db "$2" --out "$out"
  after=$(cpu_s "$4")
  read -r user sys rss <"$tmp/time"
  python3 - "$out" "$rss" "$user" "$sys" "$ops" "$before" "$after" <<'EOF'
import json, sys
out, rss, whole, ops = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) + float(sys.argv[4]), sys.argv[5]
whole_server = float(sys.argv[7]) - float(sys.argv[6])
run = json.load(open(f"{out}/run.json"))
summary = json.load(open(f"{out}/summary.json"))["overall"]
p = summary["percentiles_us"]
server = run.get("server_cpu") or {"cpu_us_per_op": float("nan")}
print(f'{summary["throughput_ops_s"]:.0f} {p["p50"]:.1f} {p["p99"]:.1f} '
      f'{run["client"]["cpu_us_per_op"]:.2f} {rss / 1024:.1f} {server["cpu_us_per_op"]:.2f} {whole:.3f} {ops} {whole_server:.3f}')
EOF
  rm -rf "$out"
}

# measure_floor URL CONNS LAYOUT RECORDS: "ops_s nan nan cpu_us nan nan nan ops nan".
measure_floor() {
  local line
  line=$(timeout "$limit" "$floor" "$1" "$2" "$ops" "$3" notes "$4") || exit 1
  read -r ops_s cpu <<<"$line"
  echo "$ops_s nan nan $cpu nan nan nan $ops nan"
}

# record RACE CONNS TOOL MEASURE…: appends MEASURE's line to the rows; a run that
# failed, or whose figures could not be read, ends the script with the tool's name.
record() {
  local race=$1 count=$2 tool=$3 line
  shift 3
  line=$("$@") || { echo "race: $tool failed in $race at $count in flight (its output is above)" >&2; exit 1; }
  [[ "$(wc -w <<<"$line")" -eq 9 && "${line%% *}" != 0 ]] || { echo "race: could not read $tool's figures in $race at $count: '$line'" >&2; exit 1; }
  echo "$race $count $tool $line" >>"$tmp/rows"
}

# race NAME PEER SERVER_PID PARSER PRESET URL FRESH PEER_COMMAND_FN EMPTY:
# PEER_COMMAND_FN COUNT fills the array `peer` with the peer's command at COUNT in
# flight; EMPTY runs before each tool's round (empty_tables or keep_tables).
race() {
  local name=$1 peer_name=$2 server=$3 parse=$4 preset=$5 url=$6 fresh=$7 command=$8 empty=$9
  "$command" "${counts[0]}"
  printf '  %-9s %s\n' "$peer_name:" "${peer[*]}" "hatshop:" "$bin run -w $preset -c ${counts[0]} --events $ops --db '$url'" >>"$tmp/commands"
  warm_up
  for count in "${counts[@]}"; do
    step "$name: the peer's connections and start-up at $count in flight"
    peer_setup "$server" "$command" "$count"
    step "$name: they cost the server $peer_setup_s s, left out of $peer_name's server CPU"
    "$command" "$count"
    for ((r = 1; r <= repeats; r++)); do
      step "$name: $count in flight, repeat $r of $repeats"
      pair "$r" ""
      # The short round: the long rounds less it is the work in steady state, with
      # neither tool's start-up, row loading or warm-up in it.
      local all=$ops
      ops=$short
      "$command" "$count"
      pair "$r" :short
      ops=$all
      "$command" "$count"
    done
  done
}

# warm_up: unrecorded rounds of the peer and hatshop at the first count until the
# two tools' throughput together (their geometric mean) is within a tenth of the round
# before, at most $warm_max rounds: a freshly started server runs its first rounds
# slower (Cassandra's got two to three times quicker over its first minutes,
# bench/NOTES.md), and one tool's rounds alone stray by a tenth on this machine. What
# it saw goes under the race's table, and a server that never settled is said there
# (inside race).
warm_up() {
  local round line peer_rate hatshop_rate both last=0 seen=()
  for ((round = 1; round <= warm_max; round++)); do
    step "$name: warm-up round $round (not recorded)"
    "$empty"
    "$fresh"
    line=$(measure_peer "$server" "$parse" "${peer[@]}")
    peer_rate=${line%% *}
    "$empty"
    line=$(measure_hatshop "$preset" "$url" "${counts[0]}" "$server")
    hatshop_rate=${line%% *}
    seen+=("$peer_rate/$hatshop_rate")
    both=$(awk -v a="$peer_rate" -v b="$hatshop_rate" 'BEGIN { print sqrt(a * b) }')
    if awk -v now="$both" -v before="$last" 'BEGIN { exit !(before > 0 && now > 0.9 * before && now < 1.1 * before) }'; then
      echo "$name settled after $round warm-up rounds at ${counts[0]} in flight (ops/s, $peer_name/hatshop: ${seen[*]})" >>"$tmp/warm"
      return
    fi
    last=$both
  done
  echo "$name NOT settled after $warm_max warm-up rounds at ${counts[0]} in flight (ops/s, $peer_name/hatshop: ${seen[*]}): its cells may still measure the server warming up" >>"$tmp/warm"
}

# pair ROUND SUFFIX: one round of the peer and hatshop at the current $ops, in the
# order ROUND gives, recorded as TOOL$SUFFIX (inside race, whose locals it reads).
pair() {
  if (($1 % 2)); then
    "$empty"
    "$fresh"
    record "$name" "$count" "$peer_name$2" measure_peer "$server" "$parse" "${peer[@]}"
    "$empty"
    record "$name" "$count" "hatshop$2" measure_hatshop "$preset" "$url" "$count" "$server"
  else
    "$empty"
    record "$name" "$count" "hatshop$2" measure_hatshop "$preset" "$url" "$count" "$server"
    "$empty"
    "$fresh"
    record "$name" "$count" "$peer_name$2" measure_peer "$server" "$parse" "${peer[@]}"
  fi
}

# keep_tables: each tool's tables stay on the server through the other's round.
keep_tables() { :; }

# floor NAME URL RECORDS: the floor's rows for race NAME at each count, reading a
# table of as many records as the race's.
floor_rows() {
  for count in "${counts[@]}"; do
    step "$1: the floor at $count in flight"
    record "$1" "$count" "floor:1" measure_floor "$2" "$count" shared:1 "$3"
    record "$1" "$count" "floor:N" measure_floor "$2" "$count" shared "$3"
    record "$1" "$count" "floor:T" measure_floor "$2" "$count" spread "$3"
  done
}

if wants cassandra; then
  step "starting Cassandra"
  cql_url=$(start cassandra)
  read -r cql_host _ < <(host_port "$cql_url")
  cql_url="${cql_url%%\?*}?cl=ONE"
  workload=$PWD/bench/race/kv.rn
  # latte writes its report and log where it runs: in $tmp.
  latte_insert() { peer=(env -C "$tmp" latte run "$workload" -f insert -d "$ops" -w 0 -p "$1" --consistency ONE -q "$cql_host"); }
  latte_read() { peer=(env -C "$tmp" latte run "$workload" -f read -d "$ops" -w 0 -p "$1" --consistency ONE -q "$cql_host"); }
  # Before each peer run its tables are made again (and loaded, for reads), as hatshop
  # makes and loads its own in each run. Outside the peer's timing.
  fresh_cql_table() { env -C "$tmp" latte schema "$workload" "$cql_host" >/dev/null 2>&1; }
  fresh_cql_rows() { fresh_cql_table; env -C "$tmp" latte load "$workload" -P rows=300000 "$cql_host" >/dev/null 2>&1; }
  # Before each tool's round both tools' tables are emptied, so that each reads and
  # writes on a node that holds its own rows alone: right after latte's 300,000 rows,
  # hatshop's reads ran about a fifth slower than on a node emptied of them
  # (bench/NOTES.md), and in three rounds one tool goes second twice.
  empty_tables() {
    bounded "$bin" prepare --db "$cql_url"
    fresh_cql_table
  }
  race cql-insert latte "$(cat "$tmp/cassandra.pid")" parse_latte race-cql-insert "$cql_url" fresh_cql_table latte_insert empty_tables
  race cql-read latte "$(cat "$tmp/cassandra.pid")" parse_latte race-cql-read "$cql_url" fresh_cql_rows latte_read empty_tables
  floor_rows cql-read "$cql_url" 300000
fi

if wants mariadb; then
  step "starting MariaDB"
  sql_url=$(start mariadb)
  echo "$sql_url" >"$tmp/mariadb.url"
  read -r sql_host sql_port < <(host_port "$sql_url")
  # sysbench's sbtest shape: INT id, indexed INT k, the value in c, a 60-character pad.
  sql_url="${sql_url%%\?*}?kv_table=sbtest"
  sql_user=(--mysql-user=root)
  if [ -n "$tls" ]; then
    # mysql_native_password: sysbench's client library (libmariadb) loads its ed25519
    # plugin in each thread, and threads connecting at once fail ("Plugin
    # client_ed25519 could not be loaded: it is already loaded").
    mysql --ssl -h"$sql_host" -P"$sql_port" -uroot -e "DROP USER IF EXISTS bench@'127.%'; CREATE USER bench@'127.%' IDENTIFIED BY '$race_pw'; GRANT ALL ON *.* TO bench@'127.%'"
    sql_url="mysql://bench:$race_pw@$sql_host:$sql_port/hatshop?kv_table=sbtest&ssl-mode=REQUIRED"
    sql_user=(--mysql-user=bench --mysql-password="$race_pw" --mysql-ssl=on)
    # sysbench's TLS presents a client certificate from files of fixed names in its
    # working directory: one the server's CA signs.
    sql_ca=$(param "$(cat "$tmp/mariadb.url")" ssl-ca)
    mkdir -p "$tmp/sysbench"
    cp "$sql_ca" "$tmp/sysbench/cacert.pem"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=bench \
      -keyout "$tmp/sysbench/client-key.pem" -out "$tmp/sysbench/client.csr" 2>/dev/null
    openssl x509 -req -in "$tmp/sysbench/client.csr" -CA "$sql_ca" -CAkey "${sql_ca%.pem}.key" \
      -CAcreateserial -days 2 -out "$tmp/sysbench/client-cert.pem" 2>/dev/null
  fi
  mysql ${tls:+--ssl} -h"$sql_host" -P"$sql_port" -uroot -e "CREATE DATABASE IF NOT EXISTS sbtest"
  sb="--db-driver=mysql --mysql-host=$sql_host --mysql-port=$sql_port ${sql_user[*]} --mysql-db=sbtest --tables=1 --table-size=100000"
  # race-sql-select draws keys as sysbench's default, --rand-type=special, which the
  # command names so that a sysbench with another default reads the same rows.
  mkdir -p "$tmp/sysbench"
  sysbench=(env -C "$tmp/sysbench" sysbench)
  sysbench_select() { peer=("${sysbench[@]}" oltp_point_select $sb --rand-type=special --threads="$1" --events="$ops" --time=0 --percentile=99 --histogram=on run); }
  sysbench_insert() { peer=("${sysbench[@]}" oltp_insert $sb --threads="$1" --events="$ops" --time=0 --percentile=99 --histogram=on run); }
  fresh_sbtest() {
    "${sysbench[@]}" oltp_point_select $sb cleanup >"$tmp/fresh" || { cat "$tmp/fresh" >&2; exit 1; }
    "${sysbench[@]}" oltp_point_select $sb prepare >"$tmp/fresh" || { cat "$tmp/fresh" >&2; exit 1; }
  }
  race sql-select sysbench "$(cat "$tmp/mariadb.pid")" parse_sysbench race-sql-select "$sql_url" fresh_sbtest sysbench_select keep_tables
  race sql-insert sysbench "$(cat "$tmp/mariadb.pid")" parse_sysbench race-sql-insert "$sql_url" fresh_sbtest sysbench_insert keep_tables
  floor_rows sql-select "$sql_url" 100000
fi

if wants postgres; then
  step "starting PostgreSQL"
  pg_url=$(start postgres)
  read -r pg_host pg_port < <(host_port "$pg_url")
  # pgbench's pgbench_accounts shape: INT aid, bid and abalance, the value in filler.
  pg_url="${pg_url%%\?*}?kv_table=pgbench_accounts"
  pg=(-h "$pg_host" -p "$pg_port" -U postgres)
  if [ -n "$tls" ]; then
    # A SCRAM-SHA-256 user (PostgreSQL's default password method), over TLS.
    export PGSSLMODE=require
    psql "${pg[@]}" -d postgres -qc "DROP ROLE IF EXISTS bench" -c "CREATE ROLE bench LOGIN SUPERUSER PASSWORD '$race_pw'"
    hba=$(psql "${pg[@]}" -d postgres -tAc "SHOW hba_file")
    grep -q '^hostssl all bench ' "$hba" || sed -i "1i hostssl all bench 127.0.0.1/32 scram-sha-256" "$hba"
    psql "${pg[@]}" -d postgres -qtc "SELECT pg_reload_conf()" >/dev/null
    export PGPASSWORD=$race_pw
    pg=(-h "$pg_host" -p "$pg_port" -U bench)
    pg_url="postgres://bench:$race_pw@$pg_host:$pg_port/hatshop?kv_table=pgbench_accounts&sslmode=require"
  fi
  psql "${pg[@]}" -d postgres -qtc "SELECT 1 FROM pg_database WHERE datname = 'pgbench'" | grep -q 1 ||
    psql "${pg[@]}" -d postgres -qc "CREATE DATABASE pgbench"
  # -j: pgbench's threads, at most one per core and per connection.
  pgbench_select() {
    local jobs=$(($1 < $(nproc) ? $1 : $(nproc)))
    peer=(pgbench "${pg[@]}" -n -S -M prepared -c "$1" -j "$jobs" -t $((ops / $1 > 0 ? ops / $1 : 1)) -l --log-prefix="$tmp/pgbench_log" pgbench)
  }
  fresh_pgbench() { pgbench "${pg[@]}" -i -q -s 1 pgbench >/dev/null 2>&1; }
  race pg-select pgbench "$(cat "$tmp/postgres.pid")" parse_pgbench race-pg-select "$pg_url" fresh_pgbench pgbench_select keep_tables
  floor_rows pg-select "$pg_url" 100000
fi

if wants redis; then
  step "starting Redis"
  redis_url=$(start redis)
  redis_url_started=$redis_url
  read -r redis_host redis_port < <(host_port "$redis_url")
  # The peer's keys live in database 5, hatshop's in 6.
  redis_url="redis://$redis_host:$redis_port/6"
  cli=(-h "$redis_host" -p "$redis_port")
  if [ -n "$tls" ]; then
    # An ACL user, over TLS; the default user is left as `server start` made it.
    redis_ca=$(param "$redis_url_started" cacert)
    cli+=(--tls --cacert "$redis_ca")
    redis-cli "${cli[@]}" ACL SETUSER bench on ">$race_pw" '~*' '&*' +@all >/dev/null
    cli+=(--user bench -a "$race_pw")
    redis_url="rediss://bench:$race_pw@$redis_host:$redis_port/6?cacert=$redis_ca"
  fi
  rb=(redis-benchmark "${cli[@]}" --dbnum 5 -d 100 -r 100000 -P 1 --csv)
  redis_get() { peer=("${rb[@]}" -n "$ops" -c "$1" -t get); }
  redis_set() { peer=("${rb[@]}" -n "$ops" -c "$1" -t set); }
  fresh_redis_keys() {
    redis-cli "${cli[@]}" -n 5 FLUSHDB 2>/dev/null >"$tmp/fresh" || { cat "$tmp/fresh" >&2; exit 1; }
    redis-benchmark "${cli[@]}" --dbnum 5 -d 100 -r 100000 -n 300000 -c 50 -t set -q >"$tmp/fresh" 2>&1 || { cat "$tmp/fresh" >&2; exit 1; }
  }
  race redis-get redis-benchmark "$(cat "$tmp/redis.pid")" parse_redis_benchmark race-redis-get "$redis_url" fresh_redis_keys redis_get keep_tables
  race redis-set redis-benchmark "$(cat "$tmp/redis.pid")" parse_redis_benchmark race-redis-set "$redis_url" fresh_redis_keys redis_set keep_tables
  floor_rows redis-get "$redis_url" 100000
fi

if wants voldemort; then
  step "starting Voldemort"
  vold_url=$(start voldemort)
  read -r vold_host vold_port < <(host_port "$vold_url")
  # The classes and jars of the build the server runs, and its store's quorums.
  read -r vold_classes vold_lib vold_n vold_r vold_w < <(python3 - "$HATSHOP_HOME/servers/voldemort/server.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
print(s["classes"], s["lib"], *(s.get(k, "1") for k in ("replication_factor", "required_reads", "required_writes")))
EOF
  )
  vold_cp="$vold_classes:$vold_lib/*"
  step "building Voldemort's performance tool"
  mkdir -p "$tmp/vperf"
  tar xzf vendor/voldemort/voldemort-perf-tool-99127eab3.tar.gz -C "$tmp/vperf"
  find "$tmp/vperf" -name '*.java' >"$tmp/vperf.sources"
  bounded javac -J-Xmx1g -nowarn --release 8 -encoding UTF-8 -d "$tmp/vperf/classes" -cp "$vold_cp" @"$tmp/vperf.sources"
  # The tool writes its values as Java strings: it gets a store of its own, with string
  # keys and values and hatshop's store's quorums (a second race on the server finds it).
  cat >"$tmp/bench-store.xml" <<EOF
<stores><store><name>bench</name><persistence>bdb</persistence>
<routing-strategy>consistent-routing</routing-strategy><routing>client</routing>
<replication-factor>$vold_n</replication-factor><required-reads>$vold_r</required-reads>
<required-writes>$vold_w</required-writes>
<key-serializer><type>string</type></key-serializer><value-serializer><type>string</type></value-serializer>
</store></stores>
EOF
  timeout "$limit" java -cp "$vold_cp" voldemort.tools.admin.VAdminTool store add --file "$tmp/bench-store.xml" \
    --url "tcp://$vold_host:$vold_port" >"$tmp/out" 2>&1 || grep -q "already exists" "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
  # Its warm-up writes its 100,000 records in its own process: the steady column
  # leaves it out, as it leaves out hatshop's load.
  vold_read() { peer=(java -cp "$tmp/vperf/classes:$vold_cp" voldemort.performance.benchmark.Benchmark --url "tcp://$vold_host:$vold_port" --store-name bench --record-count 100000 --ops-count "$ops" -r 100 --threads "$1" --value-size 100); }
  fresh_vold() { :; }
  race vold-read voldemort-bench "$(cat "$tmp/voldemort.pid")" parse_vold_benchmark race-vold-read "$vold_url" fresh_vold vold_read keep_tables
fi

printf 'commands (%d operations each, %d repeats at each in-flight count, alternating who goes first; -c and the peer'"'"'s count set to each of %s%s):\n' "$ops" "$repeats" "$conns" "${tls:+; over TLS, logging in with a password}"
cat "$tmp/commands"
printf "\nwarm-up (unrecorded rounds until both tools' throughput together holds within a tenth):\n"
sed 's/^/  /' "$tmp/warm"
python3 - "$tmp/rows" <<'EOF'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    race, count, tool, *values = line.split()
    rows.setdefault(race, {}).setdefault(int(count), {}).setdefault(tool, []).append([float(v) for v in values])
heads = ["ops/s", "p50 µs", "p99 µs", "client µs/op", "client MB", "server µs/op", "steady client", "steady server"]
def steady(tools, tool, field):
    """CPU over a whole long round less a short round's (medians), µs per operation between
    them, and whether it rests on too little: one round, or rounds whose own figures (each
    long round less the short round run beside it) spread by more than a quarter of their
    median."""
    if tool + ":short" not in tools:
        return math.nan, False
    long, short = tools[tool], tools[tool + ":short"]
    cpu = statistics.median(r[field] for r in long) - statistics.median(r[field] for r in short)
    ops = long[0][7] - short[0][7]
    if ops <= 0:
        return math.nan, False
    rounds = [(l[field] - s[field]) * 1e6 / ops for l, s in zip(long, short)]
    figure = cpu * 1e6 / ops
    doubtful = len(rounds) < 2 or figure <= 0 or max(rounds) - min(rounds) > 0.25 * figure
    return figure, doubtful
def same_server_cost(hatshop, peer):
    """hatshop ÷ peer in client CPU per operation at the same server CPU per operation: a
    round's client CPU follows what the server spent on it that round, so both tools'
    long rounds are fitted as client = a_tool + b × server, one slope for both, and read
    at the median of their rounds' server figures; doubtful, as a steady figure is, when
    either tool's rounds, each moved along the slope to that server figure, spread by
    more than a quarter of their median. None without two rounds a tool, server
    figures, or a spread of them to fit."""
    groups = [[(r[5], r[3]) for r in runs] for runs in (hatshop, peer)]
    if any(len(g) < 2 or any(math.isnan(x) for x, _ in g) for g in groups):
        return None
    means = [(statistics.fmean(x for x, _ in g), statistics.fmean(y for _, y in g)) for g in groups]
    sxx = sum((x - mx) ** 2 for g, (mx, _) in zip(groups, means) for x, _ in g)
    sxy = sum((x - mx) * (y - my) for g, (mx, my) in zip(groups, means) for x, y in g)
    if sxx <= 0:
        return None
    slope = sxy / sxx
    at = statistics.median(x for g in groups for x, _ in g)
    hatshop_at, peer_at = (my + slope * (at - mx) for mx, my in means)
    moved = [[y + slope * (at - x) for x, y in g] for g in groups]
    doubtful = any(max(m) - min(m) > 0.25 * statistics.median(m) for m in moved)
    return (hatshop_at / peer_at, doubtful, at, slope) if peer_at > 0 else None
def show(v, doubtful):
    mark = "?" if doubtful else " "
    return f"{v:>11}{mark}" if math.isnan(v) else f"{v:>11,.1f}{mark}"
for race, by_count in rows.items():
    print(f"\n{race}")
    print(f'{"in flight":>9} {"tool":<15} ' + " ".join(f"{h:>12}" for h in heads) + f' {"hatshop ÷ peer (ops/s, client, steady)":>41}  {"ops/s by round":>14}')
    for count, tools in sorted(by_count.items()):
        shown = {t: runs for t, runs in tools.items() if not t.endswith(":short")}
        medians, doubts = {}, {}
        for t, runs in shown.items():
            (client, client_doubt), (server, server_doubt) = steady(tools, t, 6), steady(tools, t, 8)
            medians[t] = [statistics.median(c) for c in zip(*runs)][:6] + [client, server]
            doubts[t] = [False] * 6 + [client_doubt, server_doubt]
        peer_tool = next((t for t in shown if t != "hatshop" and not t.startswith("floor")), None)
        for tool, m in medians.items():
            ratio = spread = ""
            if tool == "hatshop" and peer_tool:
                peer = medians[peer_tool]
                steady_doubt = "?" if doubts[tool][6] or doubts[peer_tool][6] else ""
                ratio = f"{m[0] / peer[0]:.2f} ×, {m[3] / peer[3]:.2f} ×, {m[6] / peer[6]:.2f} ×{steady_doubt}"
                # Each round's hatshop ÷ that round's peer: how far one round strays.
                rounds = [h[0] / p[0] for h, p in zip(tools["hatshop"], tools[peer_tool])]
                spread = f"{min(rounds):.2f}–{max(rounds):.2f} ×"
            print(f"{count:>9} {tool:<15} " + " ".join(show(v, d) for v, d in zip(m, doubts[tool])) + f" {ratio:>41}  {spread:>14}")
        same = peer_tool and "hatshop" in tools and same_server_cost(tools["hatshop"], tools[peer_tool])
        if same:
            ratio, doubtful, at, slope = same
            print(f"{count:>9} at the same server cost ({at:.1f} µs/op; client = a + {slope:.2f} × server"
                  f" over both tools' rounds): hatshop ÷ {peer_tool} {ratio:.2f} ×{'?' if doubtful else ''}"
                  " in client µs/op")
print("\nmedians of the repeats; ops/s, p50, p99 as each tool reports them (Voldemort's tool")
print("in whole milliseconds); client µs/op: hatshop's measured window, the peer's whole")
print("process; steady client and server: the client's whole process, and the server around")
print("it, over the long rounds less the short rounds, per operation between them (no")
print("start-up, row loading or warm-up in it); ops/s by round: the lowest and highest of")
print("each round's hatshop ÷ that round's peer; floor:1, floor:N and floor:T are the store's")
print("own client code reading with nothing around it, on one runtime thread, on one per")
print("core, and on a thread per core with an event loop each; ? marks a steady figure that")
print("rests on too little: one round, or rounds whose own figures (each long round less")
print("the short round beside it) spread by more than a quarter of the median")
print("at the same server cost: each round's client CPU follows what the server spent on")
print("it that round; both tools' rounds fitted as client µs/op = a + b × server µs/op, one")
print("slope for both, and each tool's line read at the median of their server figures;")
print("? when either tool's rounds, moved along the slope to it, spread by more than a")
print("quarter of their median")
EOF
