#!/usr/bin/env bash
# Peak memory of ingest on files whose size is all in one place: a Codex
# rollout whose one function_call_output holds SIZE_MB (default 200), one
# OpenAI chat line whose tool message holds it, and an Inspect sample of that
# size on one line (half one tool output, half model events), as a .json log
# and as an .eval archive. Each file is ingested in its own process per
# mode; the peak resident memory is the process's VmHWM, and /usr/bin/time's
# maximum RSS when it is installed. The files are made, and measured, by
# bench/ingestbench.
#
#   bench/longline.sh                         # this tree
#   BEFORE=a86d8e5 bench/longline.sh          # and the ingest of that revision, on the same files
#   SIZE_MB=1000 SHAPES=inspect-eval MODES=decode bench/longline.sh
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${SIZE_MB:-200}
shapes=${SHAPES:-codex chat inspect-json inspect-eval}
modes=${MODES:-decode store}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/after" ./bench/ingestbench
builds=after
if [ -n "${BEFORE:-}" ]; then
  # The same program, built against the ingest of revision BEFORE.
  mkdir "$work/src"
  git archive "$BEFORE" | tar -x -C "$work/src"
  rm -rf "$work/src/bench/ingestbench"
  cp -r bench/ingestbench "$work/src/bench/"
  (cd "$work/src" && go build -o "$work/before" ./bench/ingestbench)
  builds="before after"
fi
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo) memory"
for shape in $shapes; do
  input="$work/$shape.in"
  "$work/after" -gen "$shape" -mb "$size_mb" -o "$input"
  echo "== $shape: $(du -m "$input" | cut -f1) MB on disk"
  for mode in $modes; do
    for build in $builds; do
      line=$( { if [ -x /usr/bin/time ]; then /usr/bin/time -f 'time-maxrss %M' "$work/$build" -mode "$mode" -file "$input"; else "$work/$build" -mode "$mode" -file "$input"; fi; } 2>"$work/err" ) || true
      maxrss=$(awk '/^time-maxrss/ {printf "%.1f MB", $2/1024}' "$work/err")
      if [ -z "$line" ]; then
        line="failed: $(grep -v '^time-maxrss' "$work/err" | tail -1)"
      fi
      printf '%-6s %s  (time: max RSS %s)\n' "$build" "$line" "${maxrss:-?}"
    done
  done
done
rm -rf "$work"
