#!/usr/bin/env bash
# The live OTLP receiver (faultline receive) on loopback, bounded in count and
# time: 4 clients post OTLP/HTTP protobuf requests of 100 spans (10 agent runs
# of 10 spans with GenAI attributes of a small agent's size), REQUESTS per
# round (default 400), 3 rounds, until every trace is assembled:
#   - spans/s with the assembled traces mapped and then discarded;
#   - spans/s mapped, run through the 27 detectors and stored in SQLite, as
#     faultline receive stores them, ROUNDS times (default 3), each round
#     also with the receiver of revision BEFORE when given, so that the two
#     share the machine's load;
#   - heap held per open trace, next to what the memory limit counts for it;
#   - spans/s of a `faultline receive` process (of this tree, and of BEFORE
#     when given, taking turns ROUNDS times) storing 3 x REQUESTS requests of
#     those runs that one client process posts, 4 at a time: the rate of the
#     receiver apart from its clients, with its CPU time per span, and the
#     medians of the rounds (with BEFORE, as ratios);
#   - peak resident memory (VmHWM) of a `faultline receive` process while
#     16 clients post a 23 MiB request each at once (CLIENTS, SIZE_MB), at
#     the default memory limit and at --max-memory-mb 64, once with the
#     refused requests given up and once retried until stored (with
#     BEFORE, for that revision's build too).
#
#   bench/receive.sh
#   REQUESTS=1000 bench/receive.sh
#   BEFORE=5a6aeac ROUNDS=5 bench/receive.sh         # and the receiver of that revision
#   ONLY=rss bench/receive.sh                       # the peak RSS part only
#   BEFORE=a4443aa~1 ONLY=rate bench/receive.sh     # the receiver processes' rate only
#   FAULTLINE=/tmp/faultline-old bench/receive.sh   # the RSS part with another build
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-400}
clients=${CLIENTS:-16}
size_mb=${SIZE_MB:-23}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rounds=${ROUNDS:-3}
builds=after
if [ -n "${BEFORE:-}" ]; then
  # That revision's receiver and benchmark, as they were.
  mkdir "$work/src"
  git archive "$BEFORE" | tar -x -C "$work/src"
  (cd "$work/src" && go test -c -o "$work/before.test" ./internal/receive && go build -o "$work/faultline-before" ./cmd/faultline)
  builds="before after"
fi
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${ONLY:-}" ]; then
  go test -c -o "$work/after.test" ./internal/receive
  "$work/after.test" -test.run '^$' -test.bench 'Receive$' -test.benchtime 3x -receive.requests "$requests"
  for round in $(seq "$rounds"); do
    for build in $builds; do
      echo "== stored, round $round: $build (load: $(cut -d' ' -f1 /proc/loadavg))"
      "$work/$build.test" -test.run '^$' -test.bench 'Receive$' -test.benchtime 3x -receive.requests "$requests" -receive.store | grep Benchmark
    done
  done
  "$work/after.test" -test.run '^$' -test.bench 'OpenTraceMemory' -test.benchtime 3x
fi

faultline=${FAULTLINE:-}
if [ -z "$faultline" ]; then
  go build -o "$work/faultline" ./cmd/faultline
  faultline="$work/faultline"
fi
go build -o "$work/receivebench" ./bench/receivebench

# rss LABEL CLIENT-FLAGS -- RECEIVER-FLAGS: peak RSS of a fresh receiver
# while the clients post.
rss() {
  local label=$1
  shift
  local client=()
  while [ "$1" != "--" ]; do client+=("$1"); shift; done
  shift
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
  rm -f "$work/f.db"*
  "$faultline" --db "$work/f.db" --quiet receive --addr "127.0.0.1:$port" --root-wait 100ms "$@" 2>"$work/receive.log" &
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$work/receive.log" && break; sleep 0.05; done
  local idle
  idle=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  echo "== $label (receiver: ${*:-defaults})"
  "$work/receivebench" -url "http://127.0.0.1:$port/v1/traces" -clients "$clients" -size-mb "$size_mb" "${client[@]}"
  sleep 1
  echo "peak RSS: $(awk '/VmHWM/ {printf "%d MiB", $2/1024}' "/proc/$pid/status") (idle: $((idle / 1024)) MiB)"
  kill -INT "$pid"
  wait "$pid" || true
  tail -1 "$work/receive.log"
}
receivers=("this tree:$faultline")
if [ -n "${BEFORE:-}" ]; then
  receivers=("$BEFORE:$work/faultline-before" "${receivers[@]}")
fi

# rate LABEL BINARY: spans/s of a `faultline receive` process storing
# through the detectors into SQLite: one client process posts REQUESTS x 3
# requests of the in-process benchmark's runs (built before the first is
# sent), 4 at a time, then the receiver is stopped, and stores what it holds
# before it exits; the time runs from the first request to its exit. The
# receiver's own CPU time per span is printed beside it, and both are kept
# in $work/rates for the medians (bench/medians.awk): on a shared host the
# wall time of one round moves by a fifth or more, its CPU time less.
rate() {
  local label=$1 bin=$2 port n=$((requests * 3))
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
  rm -f "$work/r.db"*
  # time(1) ignores the interrupt that stops the receiver: it goes to its child.
  /usr/bin/time -f '%U %S' -o "$work/rate.time" "$bin" --db "$work/r.db" --quiet receive --addr "127.0.0.1:$port" --root-wait 5ms >/dev/null 2>"$work/rate.log" &
  local timer=$!
  for _ in $(seq 100); do grep -q listening "$work/rate.log" && break; sleep 0.05; done
  local start end
  start=$(date +%s.%N)
  "$work/receivebench" -url "http://127.0.0.1:$port/v1/traces" -requests "$n" -clients 4 >"$work/rate.out"
  pkill -INT -P "$timer"
  wait "$timer" || true
  end=$(date +%s.%N)
  local user sys
  read -r user sys <"$work/rate.time"
  awk -v label="$label" -v n="$n" -v s="$start" -v e="$end" -v cpu="$(echo "$user + $sys" | bc)" -v out="$(cat "$work/rate.out")" -v got="$(grep -o 'stored [0-9]* traces' "$work/rate.log")" \
    'BEGIN { printf "%8.0f spans/s  %5.1f µs CPU/span  (%d spans in %.2f s, %.1f s CPU; %s; %s)\n", n * 100 / (e - s), cpu * 1e6 / (n * 100), n * 100, e - s, cpu, got, out
      printf "%s\t%f\t%f\n", label, n * 100 / (e - s), cpu * 1e6 / (n * 100) >> "'"$work/rates"'" }'
}
if [ "${ONLY:-rate}" = rate ]; then
  for round in $(seq "$rounds"); do
    for receiver in "${receivers[@]}"; do
      echo -n "== process, round $round: ${receiver%%:*}  "
      rate "${receiver%%:*}" "${receiver#*:}"
    done
  done
  # Medians of the rounds, and this tree's against BEFORE's.
  awk -F'\t' -v cols='spans/s=%.0f,µs CPU/span=%.1f' -v base="${BEFORE:-}" -v other='this tree' -f bench/medians.awk "$work/rates"
fi

if [ "${ONLY:-rss}" = rss ]; then
  for receiver in "${receivers[@]}"; do
    faultline=${receiver#*:}
    echo "### peak RSS, faultline of ${receiver%%:*}"
    rss "$clients x $size_mb MiB at once, refusals given up" --
    rss "$clients x $size_mb MiB at once, refusals given up" -- --max-memory-mb 64
    rss "$clients x $size_mb MiB at once, refusals retried" -retry --
  done
fi
