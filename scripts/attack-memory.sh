#!/usr/bin/env bash
# Memory under attack (issue 16): builds the release examples, then runs each
# attack against a fresh server on 127.0.0.1 and prints peak RSS (VmHWM) per
# attack as a Markdown table (see BENCHMARKS.md, "Memory under attack").
#
#   scripts/attack-memory.sh                 # every attack, ~2 min after the build
#   scripts/attack-memory.sh idle sessions   # some of them: progress elicitation
#                                            # idle sessions subscribe stdio
#
# Bounded: at most 10,000 connections, 20,000 requests per attack, 60 s each;
# only 127.0.0.1 is ever targeted. Needs python3 and a file-descriptor limit
# of at least ~10,100 (raised here up to the hard limit).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0
cargo build --release --features redis --example demo --example conformance >&2
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 65536 ]; then ulimit -n 65536; else ulimit -n "$hard"; fi
echo "# fd limit $(ulimit -n); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); commit $(git rev-parse --short HEAD)" >&2
exec python3 scripts/attack_memory.py target/release/examples "$@"
