#!/usr/bin/env bash
# The cohort report, the dashboard's first view and the agreement page's
# first view on a generated cohort of TRACES traces (default 100,000), each
# judged on all 14 MAST modes, with detector findings and an outcome:
# time and peak memory of this tree's faultline beside the one of BEFORE
# (default: the revision before the trace summary), medians of 3 rounds
# taking turns, on the same data.
#
# The cohort is generated through BEFORE's store, so that its schema is the
# one BEFORE reads, into $BENCH_DB when set (a million traces take about 20
# minutes: keep it), else into a temporary directory; this tree's binary
# reads a copy, $BENCH_DB.after, which it upgrades once (the migration's time
# is printed). With INGEST=N, each side also writes N traces of the same
# cohort into a new store, to show what the write path costs (the trace
# summary's triggers, for one).
#
#   bench/report.sh
#   TRACES=1000000 BENCH_DB=/var/tmp/cohort-1m.db bench/report.sh
#   INGEST=20000 BEFORE=HEAD~3 bench/report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-100000}
before=${BEFORE:-1db3b2d}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
db=${BENCH_DB:-$work/bench.db}

go build -o "$work/faultline" ./cmd/faultline
go build -o "$work/reportbench" ./bench/reportbench
go build -o "$work/cohortgen" ./bench/cohortgen
git worktree add --detach "$work/before" "$before" >/dev/null 2>&1
(cd "$work/before" && go build -o "$work/faultline-before" ./cmd/faultline)
# Today's generator, built against BEFORE's store.
mkdir -p "$work/before/bench/cohortgen"
cp bench/cohortgen/main.go "$work/before/bench/cohortgen/"
(cd "$work/before" && go build -o "$work/cohortgen-before" ./bench/cohortgen)
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores; before: $(git rev-parse --short "$before"), after: this tree"

if [ -n "${INGEST:-}" ]; then
  for round in $(seq "$rounds"); do
    for side in before after; do
      gen="$work/cohortgen"
      [ "$side" = before ] && gen="$work/cohortgen-before"
      echo -n "ingest $side, round $round: "
      "$gen" -db "$work/ingest-$side.db" -traces "$INGEST"
      rm -f "$work/ingest-$side.db"*
    done
  done
fi

if [ ! -e "$db" ]; then
  "$work/cohortgen-before" -db "$db" -traces "$traces"
fi
if [ ! -e "$db.after" ] || [ "$db" -nt "$db.after" ]; then
  rm -f "$db.after"*
  cp "$db" "$db.after"
  mkdir -p "$work/empty"
  start=$(date +%s.%N)
  "$work/faultline" --db "$db.after" --quiet ingest "$work/empty"
  echo "upgrading the store (migrations, backfill): $(echo "$(date +%s.%N) - $start" | bc) s"
fi
"$work/reportbench" -before "$work/faultline-before" -before-db "$db" -after "$work/faultline" -after-db "$db.after" -rounds "$rounds" ${FORMATS:+-formats "$FORMATS"} ${AGREEMENT+-agreement "$AGREEMENT"}
