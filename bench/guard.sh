#!/usr/bin/env bash
# faultline guard's proxy on loopback (bench/guardbench): a fake upstream
# answering chat completions in UPSTREAM_DELAY (default 20ms); open-loop load
# at RATES requests/s (default 200,1000) for DURATION each (default 5s),
# through the proxy (examples/guard.yaml) and straight to the upstream:
#   - p50/p99 latency of answers read whole, and the proxy's addition;
#   - p50/p99 time to first token of streamed answers, and the addition;
#   - heap in use per open session: SESSIONS sessions (default 1000) of STEPS
#     steps each (default 50), heap before and after over their number.
# Load generator, proxy and upstream share the machine (and one process):
# the added latency includes the proxy's share of the CPU.
#
#   bench/guard.sh
#   RATES=500 DURATION=10s bench/guard.sh
#   LOOPING=true bench/guard.sh    # agents that repeat one call: the detectors fire
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$work/guardbench" ./bench/guardbench
"$work/guardbench" -rates "${RATES:-200,1000}" -duration "${DURATION:-5s}" -upstream-delay "${UPSTREAM_DELAY:-20ms}" \
  -sessions "${SESSIONS:-1000}" -steps "${STEPS:-50}" -looping="${LOOPING:-false}"
