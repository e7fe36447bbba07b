#!/usr/bin/env bash
# faultline discover, measured:
#   1. the patterns it finds on the real Codex rollouts of ITBench's Zero
#      agent in ../shared/data (ingested and scored against the ground truth);
#   2. on a synthetic corpus of 1,000 runs with planted modes, each pattern's
#      purity (the share of its runs that carry its majority planted mode)
#      and each planted mode's coverage (the share of its runs, and of its
#      failed runs, in a pattern where it is the majority), with every kind
#      of signature and with errors and endings alone (no detector in them);
#   3. its time and peak memory at 10,000 and 100,000 synthetic runs
#      (SIZES), built from shards of 10,000 (a seed each), the median of ROUNDS rounds, printing the ranked table
#      and the JSON of every pattern with all its runs.
#
# The corpora and databases go to $DATA (default /var/tmp/fl/discover/bench)
# and are kept for the next run: 100,000 runs take about ten minutes to
# write and analyse, 6 GB of rollouts and 3 GB of database.
#
#   bench/discover.sh
#   SIZES="10000" ROUNDS=3 bench/discover.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-/var/tmp/fl/discover/bench}
sizes=${SIZES:-10000 100000}
rounds=${ROUNDS:-1}
real=../shared/data/itbench
mkdir -p "$data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/faultline" ./cmd/faultline
go build -o "$work/discoverbench" ./bench/discoverbench
fl="$work/faultline"
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, this tree ($(git rev-parse --short HEAD))"

echo
echo "== 1. The real rollouts =="
if [ -d "$real/ITBench-SRE-Agent@29c782a/agent_outputs/2/1" ]; then
  "$fl" --db "$work/real.db" -q ingest "$real/ITBench-SRE-Agent@29c782a/agent_outputs/2/1" >/dev/null || true
  "$fl" --db "$work/real.db" -q score --ground-truth "$real/ITBench-Evaluations@5bd11e7/data/ground_truths.json" >/dev/null 2>&1
  "$fl" --db "$work/real.db" -q discover --limit 10
else
  echo "$real not found: skipped"
fi

# corpus DIR SHARDS: SHARDS synthetic corpora of 10,000 runs (1,000 when
# SHARDS is 0) under DIR, analysed (ingested, detected, scored) into DIR.db.
corpus() {
  local dir=$1 shards=$2
  [ -e "$dir.db" ] && return
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$shards" = 0 ]; then
    "$fl" -q synth --seed 7 --traces 1000 --out "$dir/shard-1" >/dev/null
  else
    for k in $(seq "$shards"); do
      "$fl" -q synth --seed $((100 + k)) --traces 10000 --out "$dir/shard-$k" >/dev/null
    done
  fi
  "$fl" --db "$dir.db.tmp" -q analyze "$dir" >/dev/null
  mv "$dir.db.tmp" "$dir.db"
  for ext in -wal -shm; do [ -e "$dir.db.tmp$ext" ] && mv "$dir.db.tmp$ext" "$dir.db$ext"; done
  return 0
}

echo
echo "== 2. Planted modes: 1,000 synthetic runs (seed 7) =="
corpus "$data/synth-1000" 0
"$fl" --db "$data/synth-1000.db" -q ls --json > "$work/traces.json"
for kinds in all errors,endings; do
  "$fl" --db "$data/synth-1000.db" -q discover --json --kind "$kinds" > "$work/patterns.json"
  echo
  echo "-- signatures: $kinds"
  "$work/discoverbench" -patterns "$work/patterns.json" -planted "$data/synth-1000/shard-1/planted.json" -traces "$work/traces.json" -v
done

echo
echo "== 3. Time and peak memory =="
for n in $sizes; do
  corpus "$data/synth-$n" $((n / 10000))
  for format in text json; do
    flag=()
    [ "$format" = json ] && flag=(--json)
    times=()
    for r in $(seq "$rounds"); do
      /usr/bin/time -f "%e %M" -o "$work/time" "$fl" --db "$data/synth-$n.db" -q discover "${flag[@]}" > "$work/out.$format"
      times+=("$(cat "$work/time")")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
    printf '%7d runs, %-4s: %5s s, peak RSS %4d MB (median of %d rounds)\n' "$n" "$format" "${median% *}" $(( ${median#* } / 1024 )) "$rounds"
  done
  printf '%7d runs: %d patterns; database %s\n' "$n" "$(jq '.patterns | length' "$work/out.json")" "$(du -h "$data/synth-$n.db" | cut -f1)"
done
