#!/usr/bin/env bash
# The ladder from a store's client code to a whole run: the same point reads, one piece
# of hatshop's added at a time, each step's client CPU per read measured over its reads
# alone, so that what each piece costs reads as the difference between two steps.
#
#   bench/ladder.sh [--conns 32,128] [--rounds 2] [--ops 200000]
#                   [--stores "postgres cassandra"]
#
# Steps, each on the layout hatshop's defaults choose at that count (PostgreSQL: lanes
# on a thread per core with an event loop each, `floor … spread`; Cassandra: one runtime
# thread, `floor … shared:1`), over the rows its race reads (100,000 on pgbench's
# shape; 300,000 Cassandra rows):
#   driver   bench/floor.rs: the store's read alone, awaited in a loop per caller
#   notes    + the call notes a lane's call runs in
#   clock    + two clock reads and an HdrHistogram record per read
#   no-log   hatshop run -w PRESET --no-op-log: + the event stream, the source's hand-off
#            to the lanes, the lane itself (the watchdog, progress, read checks)
#   run      hatshop run -w PRESET: + the op log (its rows in the lane, its thread)
# A hatshop step's figure is run.json's measured window (`client.cpu_us_per_op`), split
# by thread role (`us_per_op_by_role`: the lanes' threads, the event source, the op
# log); a floor's is its process over its reads. Rounds alternate the order of the
# steps. Servers come from `hatshop server start` under $HATSHOP_HOME (reused when
# running). Prints one row per store, count and step: the medians over the rounds of
# reads/s and client µs per read, with the rounds' range, and the roles.
set -euo pipefail
cd "$(dirname "$0")/.."

conns=32,128
rounds=2
ops=200000
stores="postgres cassandra"
while [ $# -gt 0 ]; do
  case $1 in
    --conns) conns=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --stores) stores=$2; shift 2 ;;
    *) echo "ladder: unknown argument $1 (see the top of bench/ladder.sh)" >&2; exit 2 ;;
  esac
done
IFS=, read -ra counts <<<"$conns"
export HATSHOP_HOME=${HATSHOP_HOME:-$HOME/.local/share/hatshop}
# The longest one step may take: a silent server ends the script, not the session.
limit=${LADDER_TIMEOUT:-900}
cargo build --release --locked --quiet
cargo build --release --locked --quiet --example floor
bin=target/release/hatshop
floor=target/release/examples/floor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# step STORE COUNT STEP URL PRESET LAYOUT ROWS: appends "STORE COUNT STEP ops_s cpu
# lanes source op_log" to the rows.
step() {
  local store=$1 count=$2 name=$3 url=$4 preset=$5 layout=$6 rows=$7 line
  echo "ladder: $store, $count in flight, $name" >&2
  case $name in
    driver | notes | clock)
      line=$(timeout "$limit" "$floor" "$url" "$count" "$ops" "$layout" "$name" "$rows")
      line="$line nan nan nan"
      ;;
    no-log | run)
      local out="$tmp/run" flags=()
      [ "$name" = run ] || flags=(--no-op-log)
      rm -rf "$out"
      timeout "$limit" "$bin" run --quiet -w "$preset" --events "$ops" -c "$count" --db "$url" --out "$out" "${flags[@]}" >/dev/null
      line=$(python3 - "$out/run.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
client = run["client"]
roles = client["us_per_op_by_role"]
ops = json.load(open(sys.argv[1].replace("run.json", "summary.json")))["overall"]["throughput_ops_s"]
print(f'{ops:.0f} {client["cpu_us_per_op"]:.2f} {roles["lanes"]:.2f} {roles["event_source"]:.2f} {roles["op_log"]:.2f}')
EOF
      )
      ;;
  esac
  echo "$store $count $name $line" >>"$tmp/rows"
}

steps=(driver notes clock no-log run)
for store in $stores; do
  case $store in
    postgres)
      url=$(timeout "$limit" "$bin" server start postgres 2>/dev/null)
      url="${url%%\?*}?kv_table=pgbench_accounts" preset=race-pg-select layout=spread rows=100000
      ;;
    cassandra)
      url=$(timeout "$limit" "$bin" server start cassandra 2>/dev/null)
      url="$url?cl=ONE" preset=race-cql-read layout=shared:1 rows=300000
      ;;
    *) echo "ladder: no ladder for $store (postgres, cassandra)" >&2; exit 2 ;;
  esac
  for count in "${counts[@]}"; do
    for ((r = 1; r <= rounds; r++)); do
      order=("${steps[@]}")
      # Even rounds run the steps the other way round.
      if ((r % 2 == 0)); then
        order=(); for ((i = ${#steps[@]} - 1; i >= 0; i--)); do order+=("${steps[i]}"); done
      fi
      for name in "${order[@]}"; do
        step "$store" "$count" "$name" "$url" "$preset" "$layout" "$rows"
      done
    done
  done
done

python3 - "$tmp/rows" "${steps[*]}" <<'EOF'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    store, count, step, *figures = line.split()
    rows.setdefault((store, int(count), step), []).append([float(f) for f in figures])
order = sys.argv[2].split()
print(f'{"store":<10} {"in flight":>9} {"step":<7} {"reads/s":>9} {"client µs/read":>15} {"rounds":>13} {"lanes":>6} {"source":>6} {"op log":>6}')
for key in sorted(rows, key=lambda k: (k[0], k[1], order.index(k[2]))):
    runs = rows[key]
    med = [statistics.median(c) for c in zip(*runs)]
    cpu = [r[1] for r in runs]
    roles = ["" if math.isnan(v) else f"{v:.2f}" for v in med[2:]]
    print(f'{key[0]:<10} {key[1]:>9} {key[2]:<7} {med[0]:>9,.0f} {med[1]:>15.2f} {min(cpu):>6.2f}–{max(cpu):<6.2f} {roles[0]:>6} {roles[1]:>6} {roles[2]:>6}')
EOF
