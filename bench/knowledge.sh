#!/usr/bin/env bash
# bench/knowledge.sh BUILD [FILES] — the knowledge index's figures (called
# by bench/run.sh): index, no-change refresh, 1%-changed refresh and query
# time over a generated fixture of FILES (10,000) text files
# (bench/bench_knowledge.c). Figures only; nothing is asserted.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
t=$(mktemp -d /tmp/loom-bench-knowledge.XXXXXX)
trap 'rm -rf "$t"' EXIT
"$build/bench_knowledge" "$t" "${2:-10000}" "${BENCH_KNOWLEDGE_QUERIES:-200}"
