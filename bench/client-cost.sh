#!/usr/bin/env bash
# What hatshop itself costs: generator speed, client CPU per operation against
# null:// (generation, lanes, timing, histograms, op log), and peak memory, also with
# 1 and 5 million live keys and orders (memory must follow live keys, not events),
# and the race presets of bench/race.sh.
# Usage: bench/client-cost.sh [EVENTS]   (default 10,000,000)
# Prints a table; compare rows measured in the same run, the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000}
cargo build --release --locked --quiet
bin=target/release/hatshop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure NAME TOTAL_OPS COMMAND…: wall s, CPU s (user+sys), peak RSS.
measure() {
  local name=$1 ops=$2
  shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
    cat "$tmp/err" >&2
    exit 1
  }
  read -r wall user sys rss <"$tmp/time"
  awk -v n="$name" -v ops="$ops" -v wall="$wall" -v user="$user" -v sys="$sys" -v rss="$rss" 'BEGIN {
    cpu = user + sys
    printf "%-34s %12d %8.2f %8.2f %10.0f %10.3f %9.1f\n", n, ops, wall, cpu, ops / wall, cpu * 1e6 / ops, rss / 1024
  }'
}

total=$((events + 500)) # hatshop-random loads 500 orders first
printf '%-34s %12s %8s %8s %10s %10s %9s\n' "what" "ops" "wall s" "cpu s" "ops/s" "cpu µs/op" "peak MB"
measure "generate (JSON Lines + sha256)" "$total" \
  "$bin" generate --events "$events" "$tmp/events.jsonl"
measure "run null://, 1 lane, op log" "$total" \
  "$bin" run --quiet --db null:// --events "$events" --out "$tmp/null-log"
measure "run null://, 1 lane, no op log" "$total" \
  "$bin" run --quiet --db null:// --events "$events" --no-op-log --out "$tmp/null-nolog"
measure "run null://, 8 lanes, op log" "$total" \
  "$bin" run --quiet --db null:// --events "$events" -c 8 --out "$tmp/null-8"
measure "replay events file on null://" "$total" \
  "$bin" run --quiet --db null:// --events-file "$tmp/events.jsonl" --out "$tmp/null-file"
for live in 1000000 5000000; do
  measure "kv-50w-50r, $((live / 1000000))M live keys, null://" $((live + 1000000)) \
    "$bin" run --quiet --db null:// -w kv-50w-50r --records "$live" --warmup 0 --events 1000000 --no-op-log --out "$tmp/kv-$live"
  measure "hatshop-random, $((live / 1000000))M live orders, null://" $((live + 1000000)) \
    "$bin" run --quiet --db null:// --orders "$live" --events 1000000 --no-op-log --out "$tmp/orders-$live"
done
# The race presets (bench/race.sh) on null://, op log on: their lanes, sizes and counts.
for preset in race-cql-insert:0 race-cql-read:300000 race-sql-select:100000 race-sql-insert:0; do
  name=${preset%%:*} records=${preset##*:}
  measure "$name, null://, op log" $((records + 300000)) \
    "$bin" run --quiet --db null:// -w "$name" --out "$tmp/$name"
done
rows=$(($("$bin" export "$tmp/null-log" --csv -o - | wc -l) - 1))
echo "op log rows of the op-log run: $rows (measured events: $events)"
