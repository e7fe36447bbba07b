#!/usr/bin/env bash
# Time and peak memory of `faultline report` on a generated cohort of
# TRACES traces (default 100,000), each judged on all 14 MAST modes, with
# detector findings and an outcome. The store is kept in $BENCH_DB when set
# (generating it takes a while), else in a temporary directory.
#
#   bench/report.sh
#   TRACES=20000 bench/report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=${BENCH_DB:-$work/bench.db}
go build -o "$work/faultline" ./cmd/faultline
go build -o "$work/reportbench" ./bench/reportbench
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores"
"$work/reportbench" -db "$db" -traces "$traces" -faultline "$work/faultline"
