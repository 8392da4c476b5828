#!/usr/bin/env bash
# The performance race: hatshop against latte (Cassandra) and sysbench (MariaDB) on
# the same work, same servers, one after the other, alternating who goes first.
#
#   bench/race.sh [REPEATS]        (default 3; RACE_OPS operations per run, default 300,000;
#                                   RACE_ONLY="cql-read sql-select" runs just those races)
#
# Installs what is missing (sysbench, GNU time, MariaDB, Java and Maven from Debian,
# latte 0.29 from crates.io), builds hatshop, starts a Cassandra node and a MariaDB server with
# `hatshop server start` (under $HATSHOP_HOME, reused when running), runs each race
# once unrecorded to warm the server, then REPEATS recorded rounds, and prints one
# table of medians: ops/s, p50, p99 (µs), client CPU µs/op (user + system of the
# client process ÷ ops), client peak RSS, server CPU µs/op (/proc of the server
# process), and hatshop ÷ the peer. The command lines used are printed first.
#
# race-sql-select draws its keys as sysbench's default, `--rand-type=special`, which the
# sysbench command names so that a sysbench with another default reads the same rows.
#
# hatshop runs at its defaults, with no tuning flag: its runtime threads are what each
# store chooses for the in-flight count (one on Cassandra, as latte's default -t 1; one
# on MariaDB at 2 to 4 connections; else one per core), as a user would run it.
#
# Where the numbers come from: a peer's CPU and RSS are its whole process (GNU time);
# its server CPU is the server's /proc delta around it. hatshop's CPU and server CPU
# are its measured window (run.json `client`, `server_cpu`), since its read races
# load their rows in the same process (the peers load theirs in a separate command);
# its RSS is the whole process.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
ops=${RACE_OPS:-300000}
export HATSHOP_HOME=${HATSHOP_HOME:-$HOME/.local/share/hatshop}
tmp=$(mktemp -d)
trap '[ -n "${RACE_KEEP:-}" ] || rm -rf "$tmp"' EXIT

step() { printf '== %s\n' "$*" >&2; }

step "installing what is missing"
missing=()
command -v sysbench >/dev/null || missing+=(sysbench)
[ -x /usr/bin/time ] || missing+=(time)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || missing+=(maven) # hatshop fetches Cassandra's jars with it
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v latte >/dev/null || cargo install latte-cli --version 0.29.0 --locked
cargo build --release --locked --quiet
bin=target/release/hatshop

step "starting Cassandra and MariaDB (hatshop server start, HATSHOP_HOME=$HATSHOP_HOME)"
server_pid() { "$bin" server start "$1" 2>&1 | sed -n 's/.*(pid \([0-9]*\)).*/\1/p' | head -1; }
cassandra_pid=$(server_pid cassandra)
[ -n "$cassandra_pid" ] || { echo "race: Cassandra did not start (hatshop server start cassandra)" >&2; exit 1; }
mysql_pid=$(server_pid mariadb)
[ -n "$mysql_pid" ] || { echo "race: MariaDB did not start (hatshop server start mariadb)" >&2; exit 1; }
cql_host=127.0.0.11
cql_url="cassandra://$cql_host:9042/hatshop?cl=ONE"
# sysbench's sbtest shape: INT id, indexed INT k, the value in c, a 60-character pad.
sql_url="mysql://root@127.0.0.1:3306/hatshop?kv_table=sbtest"
mysql -h127.0.0.1 -uroot -e "CREATE DATABASE IF NOT EXISTS sbtest"
sb="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3306 --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=100000"
# latte writes its report and log where it runs: in $tmp.
workload=$PWD/bench/race/kv.rn

cpu_s() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }

# measure_peer NAME SERVER_PID PARSER COMMAND…: one line "ops_s p50 p99 cpu_us rss_mb server_us".
measure_peer() {
  local server=$2 parse=$3
  shift 3
  local before after
  before=$(cpu_s "$server")
  /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>&1 || {
    cat "$tmp/out" >&2
    exit 1
  }
  after=$(cpu_s "$server")
  read -r user sys rss <"$tmp/time"
  read -r ops_s p50 p99 < <("$parse" "$tmp/out")
  awk -v o="$ops_s" -v a="$p50" -v b="$p99" -v u="$user" -v s="$sys" -v r="$rss" -v n="$ops" \
    -v sb="$before" -v sa="$after" \
    'BEGIN { printf "%.0f %.1f %.1f %.2f %.1f %.2f\n", o, a, b, (u + s) * 1e6 / n, r / 1024, (sa - sb) * 1e6 / n }'
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

# measure_hatshop PRESET URL: the same line, from run.json and summary.json.
measure_hatshop() {
  local out="$tmp/hatshop-$RANDOM$RANDOM"
  /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$bin" run --quiet -w "$1" --events "$ops" --db "$2" --out "$out" >"$tmp/out" 2>&1 || {
    cat "$tmp/out" >&2
    exit 1
  }
  read -r _ _ rss <"$tmp/time"
  python3 - "$out" "$rss" <<'EOF'
import json, sys
out, rss = sys.argv[1], float(sys.argv[2])
run = json.load(open(f"{out}/run.json"))
summary = json.load(open(f"{out}/summary.json"))["overall"]
p = summary["percentiles_us"]
server = run.get("server_cpu") or {"cpu_us_per_op": float("nan")}
print(f'{summary["throughput_ops_s"]:.0f} {p["p50"]:.1f} {p["p99"]:.1f} '
      f'{run["client"]["cpu_us_per_op"]:.2f} {rss / 1024:.1f} {server["cpu_us_per_op"]:.2f}')
EOF
  rm -rf "$out"
}

# The peers' command lines, per race.
latte_insert=(env -C "$tmp" latte run "$workload" -f insert -d "$ops" -w 0 -p 64 --consistency ONE -q "$cql_host")
latte_read=(env -C "$tmp" latte run "$workload" -f read -d "$ops" -w 0 -p 64 --consistency ONE -q "$cql_host")
sysbench_select=(sysbench oltp_point_select $sb --rand-type=special --threads=16 --events="$ops" --time=0 --percentile=99 --histogram=on run)
sysbench_insert=(sysbench oltp_insert $sb --threads=16 --events="$ops" --time=0 --percentile=99 --histogram=on run)

# Before each peer run, its tables are made again (and loaded, for reads), as hatshop
# makes and loads its own in each run: both then read freshly loaded rows, whose flushes
# and compactions the server does in both windows alike. Outside the peer's timing.
fresh_cql_table() {
  env -C "$tmp" latte schema "$workload" "$cql_host" >/dev/null 2>&1
}
fresh_cql_rows() {
  fresh_cql_table
  env -C "$tmp" latte load "$workload" -P rows=300000 "$cql_host" >/dev/null 2>&1
}
fresh_sbtest() {
  sysbench oltp_point_select $sb cleanup >/dev/null
  sysbench oltp_point_select $sb prepare >/dev/null
}

printf 'commands (%d operations each, %d repeats, alternating who goes first):\n' "$ops" "$repeats"
printf '  latte:    %s\n' "${latte_insert[*]}" "${latte_read[*]}"
printf '  sysbench: %s\n' "${sysbench_select[*]}" "${sysbench_insert[*]}"
printf '  hatshop:  %s\n' "$bin run -w race-cql-insert --db '$cql_url'" "$bin run -w race-cql-read --db '$cql_url'" \
  "$bin run -w race-sql-select --db '$sql_url'" "$bin run -w race-sql-insert --db '$sql_url'"

# record RACE TOOL MEASURE…: appends MEASURE's line to the rows; a run that failed, or
# whose figures could not be read, ends the script with the tool's name (a command
# substitution alone would hide the failure and leave the table a row short).
record() {
  local race=$1 tool=$2 line
  shift 2
  line=$("$@") || { echo "race: $tool failed in $race (its output is above)" >&2; exit 1; }
  [[ "$(wc -w <<<"$line")" -eq 6 && "${line%% *}" != 0 ]] || { echo "race: could not read $tool's figures in $race: '$line'" >&2; exit 1; }
  echo "$race $tool $line" >>"$tmp/rows"
}

# race NAME PEER_NAME SERVER_PID PARSER PRESET URL FRESH PEER_COMMAND…
race() {
  local name=$1 peer=$2 server=$3 parse=$4 preset=$5 url=$6 fresh=$7
  shift 7
  [[ -z "${RACE_ONLY:-}" || " $RACE_ONLY " == *" $name "* ]] || return 0
  # An unrecorded round first: a freshly started Cassandra compiles its hot paths
  # (and MariaDB fills its buffer pool) during the first runs, whoever makes them.
  step "$name, warm-up round (not recorded)"
  "$fresh"
  measure_peer "$peer" "$server" "$parse" "$@" >/dev/null
  measure_hatshop "$preset" "$url" >/dev/null
  for ((r = 1; r <= repeats; r++)); do
    step "$name, repeat $r of $repeats"
    if ((r % 2)); then
      "$fresh"
      record "$name" "$peer" measure_peer "$peer" "$server" "$parse" "$@"
      record "$name" hatshop measure_hatshop "$preset" "$url"
    else
      record "$name" hatshop measure_hatshop "$preset" "$url"
      "$fresh"
      record "$name" "$peer" measure_peer "$peer" "$server" "$parse" "$@"
    fi
  done
}

race cql-insert latte "$cassandra_pid" parse_latte race-cql-insert "$cql_url" fresh_cql_table "${latte_insert[@]}"
race cql-read latte "$cassandra_pid" parse_latte race-cql-read "$cql_url" fresh_cql_rows "${latte_read[@]}"
race sql-select sysbench "$mysql_pid" parse_sysbench race-sql-select "$sql_url" fresh_sbtest "${sysbench_select[@]}"
race sql-insert sysbench "$mysql_pid" parse_sysbench race-sql-insert "$sql_url" fresh_sbtest "${sysbench_insert[@]}"

python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    race, tool, *values = line.split()
    rows.setdefault((race, tool), []).append([float(v) for v in values])
heads = ["ops/s", "p50 µs", "p99 µs", "client µs/op", "client MB", "server µs/op"]
print(f'{"race":<11} {"tool":<9} ' + " ".join(f"{h:>12}" for h in heads) + f' {"hatshop ÷ peer (ops/s, client µs/op)":>38}')
for race in dict.fromkeys(r for r, _ in rows):
    medians = {}
    for (r, tool), runs in rows.items():
        if r == race:
            medians[tool] = [statistics.median(column) for column in zip(*runs)]
    for tool, m in medians.items():
        ratio = ""
        if tool == "hatshop":
            peer = next(v for t, v in medians.items() if t != "hatshop")
            ratio = f"{m[0] / peer[0]:.2f} ×, {m[3] / peer[3]:.2f} ×"
        print(f"{race:<11} {tool:<9} " + " ".join(f"{v:>12,.1f}" for v in m) + f" {ratio:>38}")
print("medians of the repeats; ops/s, p50, p99 as each tool reports them")
EOF
