#!/usr/bin/env bash
# The live OTLP receiver (faultline receive) on loopback, bounded in count and
# time: 4 clients post OTLP/HTTP protobuf requests of 100 spans (10 agent runs
# of 10 spans with GenAI attributes of a small agent's size), REQUESTS per
# round (default 400), 3 rounds, until every trace is assembled:
#   - spans/s with the assembled traces mapped and then discarded;
#   - spans/s mapped, run through the 27 detectors and stored in SQLite;
#   - heap held per open trace, next to what the memory limit counts for it.
#
#   bench/receive.sh
#   REQUESTS=1000 bench/receive.sh
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-400}
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
go test -c -o /tmp/faultline-receive.test ./receive
trap 'rm -f /tmp/faultline-receive.test' EXIT
/tmp/faultline-receive.test -test.run '^$' -test.bench 'Receive$' -test.benchtime 3x -receive.requests "$requests"
/tmp/faultline-receive.test -test.run '^$' -test.bench 'Receive$' -test.benchtime 3x -receive.requests "$requests" -receive.store
/tmp/faultline-receive.test -test.run '^$' -test.bench 'OpenTraceMemory' -test.benchtime 3x
