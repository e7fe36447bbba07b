#!/usr/bin/env bash
# Regenerates the README's "Detector accuracy on real traces" tables: the
# detectors against testdata/labels/real.jsonl on the real Zero rollouts and
# AG2 chats of ../shared/data, per mode, per system code and per detector.
# The tables go between the accuracy markers of README.md; the test
# TestAccuracyTableIsCurrent (cmd/faultline) fails when they are stale.
#
#   bench/accuracy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=../shared/data
for p in "$data/itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1" "$data/samples/ag2/raw_ag2_records.json"; do
  [ -e "$p" ] || { echo "bench/accuracy.sh: $p not found" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/faultline" ./cmd/faultline
"$work/faultline" --db "$work/db" -q eval --markdown --bootstrap 0 \
  --ingest "$data/itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1" \
  --ingest "$data/samples/ag2/raw_ag2_records.json" \
  --labels testdata/labels/real.jsonl > "$work/tables.md"
awk -v tables="$work/tables.md" '
  /<!-- accuracy:start -->/ { print; while ((getline line < tables) > 0) print line; skip = 1; next }
  /<!-- accuracy:end -->/ { skip = 0 }
  !skip { print }
' README.md > "$work/README.md"
mv "$work/README.md" README.md
echo "README.md: accuracy tables regenerated"
