#!/usr/bin/env bash
# Ingest of many small traces: `faultline synth` writes TRACES simulated
# Zero runs (default 5,000; about 29 KB of rollout each, beside AGENTS.md
# and agent_output.json, as the real run directories hold them), and
# `faultline ingest` reads them into a new store, once with this tree's
# binary and once with BEFORE's (default: the revision before batched
# writes), taking turns for ROUNDS rounds (default 2). Each run prints its
# wall and CPU time, traces per second, MB of rollout per second, the peak
# resident memory and the store's size against the rollouts' size, and
# after the rounds the medians of each side's, with the after side's as
# ratios to the before side's (bench/medians.awk). With
# TRACES2 set, the same again on that many traces, to show whether memory
# grows with their number.
#
#   bench/smalltraces.sh
#   TRACES=2000 TRACES2=10000 bench/smalltraces.sh
#   BEFORE=HEAD~5 bench/smalltraces.sh
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-5000}
before=${BEFORE:-35d07a8}
rounds=${ROUNDS:-2}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/before-src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

go build -o "$work/after" ./cmd/faultline
git worktree add --detach "$work/before-src" "$before" >/dev/null 2>&1
(cd "$work/before-src" && go build -o "$work/before" ./cmd/faultline)
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg); before: $(git rev-parse --short "$before"), after: this tree"

# run SIDE CORPUS: one ingest into a new store, and its figures.
run() {
  local side=$1 corpus=$2
  local db="$work/$side.db" n rollout_mb
  rm -f "$db"*
  n=$(find "$corpus" -name '*.jsonl' | wc -l)
  rollout_mb=$(find "$corpus" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {printf "%.1f", s / 1e6}')
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$work/$side" --db "$db" --quiet ingest "$corpus" >/dev/null
  read -r wall user sys rss <"$work/time"
  local store_mb
  store_mb=$(du -cb "$db"* | tail -1 | awk '{printf "%.1f", $1 / 1e6}')
  awk -v side="$side" -v n="$n" -v mb="$rollout_mb" -v wall="$wall" -v cpu="$(echo "$user + $sys" | bc)" -v rss="$rss" -v store="$store_mb" -v rounds="$work/rounds-$n" 'BEGIN {
    printf "%-6s %6d traces  %6.1f s wall  %6.1f s CPU  %6.0f traces/s  %5.1f MB/s  peak RSS %5.1f MB  store %6.1f MB for %6.1f MB of rollouts (%.2fx)\n",
      side, n, wall, cpu, n / wall, mb / wall, rss / 1024, store, mb, store / mb
    printf "%s\t%f\t%f\t%f\t%f\n", side, n / wall, 1000 * cpu / n, rss / 1024, store / mb >> rounds }'
}

for count in "$traces" ${TRACES2:-}; do
  corpus="$work/corpus-$count"
  "$work/after" synth --traces "$count" --out "$corpus" >/dev/null
  for round in $(seq "$rounds"); do
    for side in before after; do
      run "$side" "$corpus"
    done
  done
  n=$(find "$corpus" -name '*.jsonl' | wc -l)
  awk -F'\t' -v cols='traces/s=%.0f,ms CPU/trace=%.2f,MB peak RSS=%.1f,store/rollouts=%.2fx' -v base=before -v other=after -f bench/medians.awk "$work/rounds-$n"
done
