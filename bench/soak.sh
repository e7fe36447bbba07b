#!/usr/bin/env bash
# Soak: a durable `faultline receive`, ingest after ingest and `faultline
# serve` on one database for DURATION (default 3m), loopback only, while
# two clients post OTLP agent runs (at most MAX_TRACES, default 20000) and
# late spans for every tenth, a labeller saves labels in the web UI and a
# reader reads its pages; the receiver or the running ingest is killed with
# SIGKILL every KILL_EVERY (default 4s) on average. Then every acknowledged
# trace and late span, every ingested trace (whole) and the last label saved
# on each trace must be in the store, and SQLite's integrity check and the
# search index's must pass. Exits 1 on any loss.
#
#   bench/soak.sh
#   DURATION=10m KILL_EVERY=2s SEED=7 bench/soak.sh
#   KEEP=1 bench/soak.sh          # keep the database and the processes' logs
#   FAULTLINE=/tmp/faultline-old bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
  echo "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
faultline=${FAULTLINE:-}
if [ -z "$faultline" ]; then
  go build -o "$work/faultline" ./cmd/faultline
  faultline="$work/faultline"
fi
go build -o "$work/soakbench" ./bench/soakbench
mkdir "$work/run"
"$work/soakbench" -faultline "$faultline" -dir "$work/run" \
  -duration "${DURATION:-3m}" -kill-every "${KILL_EVERY:-4s}" -max-traces "${MAX_TRACES:-20000}" ${SEED:+-seed "$SEED"}
