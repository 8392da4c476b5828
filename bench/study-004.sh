#!/usr/bin/env bash
# Study 004 on real servers: Project Voldemort (3 nodes, N=3 R=2 W=2, BDB) against
# Apache Cassandra (3-node ring, RF 3, QUORUM), the four key-value mixes at 1,500 and
# 15,000-byte values, concurrency 40 as the study's 40 client threads; every run verified;
# then one `hatshop compare` page and table of all of them (p99, p99.9, p99.99, max,
# ops/s per operation).
#
#   bench/study-004.sh                 # RECORDS=10000 WARMUP=2000 EVENTS=20000 LANES=40
#   RECORDS=50000 EVENTS=100000 bench/study-004.sh
#
# Sized for a 2-core machine that also runs all six server nodes (the study had 5 million
# records, 500,000 operations and three 8-core servers). Servers are started with
# `hatshop server start` in $HATSHOP_HOME (left running: `hatshop server stop --all`).
set -euo pipefail
cd "$(dirname "$0")/.."

records=${RECORDS:-10000}
warmup=${WARMUP:-2000}
events=${EVENTS:-20000}
lanes=${LANES:-40}
sizes=${SIZES:-"1500 15000"}
mixes=${MIXES:-"kv-50w-50r kv-10w-40rw-50r kv-50rw-50r kv-90rw-10r"}
out=${OUT:-study-004}

hatshop=target/release/hatshop
[ -x "$hatshop" ] || cargo build --release --locked
mkdir -p "$out"

began=$(date +%s)
stage() { printf '\n== %s (%s, +%ss)\n' "$*" "$(date +%T)" "$(($(date +%s) - began))"; }

stage "servers"
voldemort=$("$hatshop" server start voldemort --nodes 3)
cassandra="$("$hatshop" server start cassandra --nodes 3)?rf=3&cl=QUORUM"
echo "voldemort: $voldemort"
echo "cassandra: $cassandra"

runs=()
for size in $sizes; do
  for mix in $mixes; do
    for store in voldemort cassandra; do
      url=$voldemort
      [ "$store" = cassandra ] && url=$cassandra
      dir="$out/$size-$mix-$store"
      stage "$mix, $size-byte values, $store"
      rm -rf "$dir"
      "$hatshop" run --quiet -w "$mix" --value-size "$size" --records "$records" \
        --warmup "$warmup" --events "$events" -c "$lanes" --recreate --verify \
        --db "$url" --out "$dir"
      runs+=("$dir")
    done
  done
done

stage "compare"
"$hatshop" compare "${runs[@]}" -o "$out"
stage "done"
