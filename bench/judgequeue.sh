#!/usr/bin/env bash
# The judge's job queue (faultline judge --queue, faultline worker) with real
# worker processes on a PostgreSQL database, against a fake OpenAI-compatible
# endpoint taking 200 ms per call (no network, no key), on TRACES synthetic
# traces (default 200):
#   - traces/s with 1, 2 and 4 worker processes of 4 jobs at once each, from
#     the first job's start to the last one's end as River recorded them (and
#     the wall time with the processes' start and exit), next to the ideal
#     (workers x 4 / 0.2 s) and to one worker's rate;
#   - two workers, one killed with SIGKILL once a third of the traces are
#     judged: the verdicts stored before the kill that are lost or rewritten
#     at the end (goal 0), the traces stored twice (goal 0), and the calls
#     repeated for the dead worker's unfinished jobs, which the other takes
#     up once River's rescuer finds them (job timeout 5 s + 10 s, checked
#     every 30 s: this part takes up to a minute).
#
# The server is $FAULTLINE_TEST_POSTGRES when set, else a throwaway cluster
# started here (Debian's postgresql, as an unprivileged user when root).
#
#   bench/judgequeue.sh
#   TRACES=400 WORKERS=1,2,4,8 bench/judgequeue.sh
#   KILL=false bench/judgequeue.sh
#   PROFILE=true bench/judgequeue.sh     # and each worker's CPU profile, kept in bench/judgequeue-logs/
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-200}
work=$(mktemp -d)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"

. bench/pgserver.sh

go build -o "$work/faultline" ./cmd/faultline
go build -o "$work/judgequeuebench" ./bench/judgequeuebench
"$work/faultline" synth -q --seed 1 --traces "$traces" --out "$work/corpus" >/dev/null
logs="$work/logs"
if [ "${PROFILE:-false}" = true ]; then logs=bench/judgequeue-logs; fi
mkdir -p "$logs"
"$work/judgequeuebench" -faultline "$work/faultline" -pg "$server" -corpus "$work/corpus" -logs "$logs" \
  -workers "${WORKERS:-1,2,4}" -kill="${KILL:-true}" -cpuprofile="${PROFILE:-false}"
