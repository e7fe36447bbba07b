#!/usr/bin/env bash
# PostgreSQL beside SQLite, one run each, the same binary:
#   - `faultline ingest` of about SIZE_MB (default 200) of real Codex
#     rollouts (copies of the largest real session, as bench/ingest.sh
#     builds them) into a new store: MB/s and the client's peak RSS (and
#     the server's, for PostgreSQL);
#   - `faultline report --format json`, the dashboard's first view and the
#     agreement page's first view (as bench/report.sh asks for it) of a
#     generated cohort of TRACES traces (default 20,000; bench/cohortgen),
#     copied from SQLite into PostgreSQL with bench/storecopy, both reports
#     checked to be the same bytes.
# The server keeps PostgreSQL's default durability (PG_DURABLE=true; SQLite
# runs with synchronous=NORMAL in WAL mode), unless FAULTLINE_TEST_POSTGRES
# names one. COHORT_DB reuses a SQLite cohort (TRACES is then its size),
# upgraded to this tree's schema first. INGEST_ONLY=true stops after the
# ingests, for repeating them on a busy machine.
#
#   bench/postgres.sh
#   TRACES=100000 COHORT_DB=/var/tmp/cohort-100k.db bench/postgres.sh
#   INGEST_ONLY=true bench/postgres.sh
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${SIZE_MB:-200}
traces=${TRACES:-20000}
sessions=../shared/data/itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1/sessions
if [ ! -d "$sessions" ]; then
  echo "bench/postgres.sh: real rollouts not found at $sessions" >&2
  exit 1
fi
work=$(mktemp -d)
cleanup() { rm -rf "$work"; }
trap 'cleanup' EXIT
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
PG_DURABLE=${PG_DURABLE:-true}
. bench/pgserver.sh
psql_do() { psql -X -q "$server" -c "$1" >/dev/null; }
on_db() { echo "$server" | sed -E "s#/[^/?]*(\?|$)#/$1\1#"; }

go build -o "$work/faultline" ./cmd/faultline
go build -o "$work/cohortgen" ./bench/cohortgen
go build -o "$work/storecopy" ./bench/storecopy
go build -o "$work/reportbench" ./bench/reportbench

largest=$(find "$sessions" -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
mkdir "$work/rollouts"
i=0
while [ "$(du -sb "$work/rollouts" | cut -f1)" -lt $((size_mb * 1000000)) ]; do
  # One file per copy, each its own session id, as a run directory holds them.
  i=$((i + 1))
  sed "s/019bc313-2cee-7763-b8b7-cdeaeeeb2319/019bc313-2cee-7763-b8b7-$(printf '%012d' "$i")/g" "$largest" >"$work/rollouts/rollout-$i.jsonl"
done
mb=$(du -sb "$work/rollouts" | awk '{printf "%.1f", $1 / 1e6}')
echo "ingest: $mb MB in $i files, copies of $(basename "$largest")"

# ingest SIDE DB: one ingest into a new store, and its figures.
# The server's CPU time is its backends', which the postmaster has reaped
# (children's user and system time in /proc/PID/stat) once the client is
# gone: on a busy machine it varies less than the wall time.
ingest() {
  local side=$1 db=$2 server_rss="" postmaster="" reaped=0
  if [ "$side" = postgresql ] && [ -f "$work/pg/data/postmaster.pid" ]; then
    postmaster=$(head -1 "$work/pg/data/postmaster.pid")
    reaped=$(awk '{print $16 + $17}' "/proc/$postmaster/stat")
  fi
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$work/faultline" --db "$db" --quiet ingest "$work/rollouts" >/dev/null
  read -r wall user sys rss <"$work/time"
  if [ -n "$postmaster" ]; then
    sleep 0.5 # for the backends to exit
    server_rss=$(ps -o rss= --ppid "$postmaster" | awk '{s += $1} END {printf "  server processes %.0f MB (sum of RSS)", s / 1024}')
    server_rss+=$(awk -v from="$reaped" -v tck="$(getconf CLK_TCK)" '{printf ", %.1f s CPU", ($16 + $17 - from) / tck}' "/proc/$postmaster/stat")
  fi
  awk -v side="$side" -v mb="$mb" -v wall="$wall" -v cpu="$(echo "$user + $sys" | bc)" -v rss="$rss" -v srv="$server_rss" 'BEGIN {
    printf "ingest  %-10s %6.1f s wall  %6.1f s client CPU  %6.1f MB/s  client peak RSS %6.1f MB%s\n", side, wall, cpu, mb / wall, rss / 1024, srv }'
}
ingest sqlite "$work/ingest.db"
psql_do "CREATE DATABASE bench_ingest"
ingest postgresql "$(on_db bench_ingest)"
[ "${INGEST_ONLY:-}" = true ] && exit 0

cohort=${COHORT_DB:-$work/cohort.db}
if [ ! -e "$cohort" ]; then
  "$work/cohortgen" -db "$cohort" -traces "$traces"
fi
# A cohort of an earlier schema is brought up to this one's first.
mkdir "$work/empty"
"$work/faultline" --db "$cohort" --quiet ingest "$work/empty" >/dev/null
psql_do "CREATE DATABASE bench_cohort"
start=$(date +%s.%N)
"$work/storecopy" -from "$cohort" -to "$(on_db bench_cohort)" 2>&1 | tail -1
echo "cohort: $traces traces copied into PostgreSQL in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-6) s"
"$work/faultline" --db "$cohort" report --format json -o "$work/sqlite.json"
"$work/faultline" --db "$(on_db bench_cohort)" report --format json -o "$work/postgresql.json"
cmp -s "$work/sqlite.json" "$work/postgresql.json" && echo "reports: the same bytes from both" || echo "reports: DIFFERENT"
# reportbench calls its sides before and after: here SQLite, then PostgreSQL.
"$work/reportbench" -before "$work/faultline" -before-db "$cohort" -after "$work/faultline" -after-db "$(on_db bench_cohort)" \
  -rounds "${ROUNDS:-1}" -formats json 2>/dev/null | sed 's/ before / sqlite /; s/ after  / pgsql  /'
