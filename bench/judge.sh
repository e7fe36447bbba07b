#!/usr/bin/env bash
# The LLM judge against a fake OpenAI-compatible endpoint (no network, no key):
#   - wall time for 500 traces at concurrency 32 with 200 ms per call, next to
#     the ideal of 500 x 0.2 s / 32 = 3.1 s, and the calls an immediate second
#     run makes (must be 0);
#   - prompt tokens per trace on the real ITBench rollouts (../shared/data),
#     next to MAST's approach: the whole trace plus ~80 KB of definitions and
#     examples in every call, counted with the same tokenizer (o200k_base).
#
#   bench/judge.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "go: $(go version | cut -d' ' -f3), $(nproc) cores"
go test -run '^$' -bench 'Judge500|PromptTokens' -benchtime 1x ./judge/
