#!/usr/bin/env bash
# Ingest throughput and peak memory on real Codex rollouts, next to a plain
# encoding/json decode of the same bytes. Builds a file of about SIZE_MB
# (default 200) by concatenating copies of the largest real rollout, then runs
# each mode in its own process.
#
#   bench/ingest.sh            # ~200 MB
#   SIZE_MB=1000 bench/ingest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${SIZE_MB:-200}
sessions=../shared/data/itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1/sessions
if [ ! -d "$sessions" ]; then
  echo "bench/ingest.sh: real rollouts not found at $sessions" >&2
  exit 1
fi
largest=$(find "$sessions" -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input="$work/rollouts.jsonl"
while [ "$(stat -c %s "$input" 2>/dev/null || echo 0)" -lt $((size_mb * 1000000)) ]; do
  cat "$largest" >> "$input"
done
go build -o "$work/ingestbench" ./bench/ingestbench
echo "input: $(du -m "$input" | cut -f1) MB, copies of $(basename "$largest")"
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores"
for mode in map decode detect store; do
  "$work/ingestbench" -mode "$mode" -file "$input"
done
