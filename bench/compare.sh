#!/usr/bin/env bash
# Measures your MCP server against rmcp (the official Rust SDK) and the
# no-framework floor (baseline), side by side in one run, and prints a markdown
# table with ratios. See README.md beside this script. From the repository root:
#
#   cargo build --release --example echo
#   bench/compare.sh --stdio "target/release/examples/echo --stdio" \
#       --http "target/release/examples/echo --http PORT --stateless" --protocol both
#
# Builds the driver (mcp-bench), baseline and rmcp-echo in release into
# $BENCH_HOME (default target/peer-bench, relative to the current directory);
# never writes inside its own folder.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
  cat <<'EOF'
usage: compare.sh --stdio "CMD ..." [--http "CMD ... PORT ..."] [options]

  --stdio CMD        your server over stdio (newline-delimited JSON-RPC on stdin/stdout)
  --http CMD         your server over streamable HTTP; every "PORT" in CMD becomes the port
                     it must listen on, at http://127.0.0.1:PORT/mcp (see --http-path)
                     (give at least one of --stdio/--http; only the transports you give are
                     measured, for all three servers)
  --protocol P       2025-11-25 | 2026-07-28 | both (default both)
  --rounds N         rounds, each running every server once in a rotated order (default 3)
  --quick            smoke run: 1 round, small counts (~30 s after the build)
  --name NAME        label for your server in the table (default ours)
  --http-path PATH   endpoint path of your HTTP server (default /mcp)
  --skip-build       reuse the binaries already in $BENCH_HOME
  --build-only       build the three binaries, print where they are, and stop
  -h, --help         this text

Commands are split into words like a shell would (quotes, backslashes) without
running a shell, and spawned directly from the current directory: give the built
server binary (not `cargo run`), so that its startup, CPU and RSS are the server's.
The server must expose a tool `echo` taking {"text": string} and returning
content [{"type": "text", "text": <same>}].

Environment: BENCH_HOME (build and results; default target/peer-bench), PORT_BASE
(default 18700: baseline, rmcp and yours listen on PORT_BASE, +1, +2), and the
measurement knobs SEQ PIPELINED WINDOW MAX_SECS CONNS DURATION WARMUP STARTUP_RUNS
PIN (driver CPU; servers get the others).
EOF
}

die() { echo "compare.sh: error: $*" >&2; exit 2; }
log() { printf '[compare %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

OURS_STDIO="" OURS_HTTP="" PROTOCOL="both" ROUNDS_ARG="" QUICK=0 NAME="ours" HTTP_PATH="/mcp" BUILD_ONLY=0
SKIP_BUILD="${SKIP_BUILD:-0}"
while (($#)); do
  case "$1" in
    --stdio) OURS_STDIO="${2:?--stdio needs a command}"; shift 2 ;;
    --http) OURS_HTTP="${2:?--http needs a command}"; shift 2 ;;
    --protocol) PROTOCOL="${2:?--protocol needs a value}"; shift 2 ;;
    --rounds) ROUNDS_ARG="${2:?--rounds needs a number}"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --name) NAME="${2:?--name needs a value}"; shift 2 ;;
    --http-path) HTTP_PATH="${2:?--http-path needs a value}"; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unexpected argument: $1" ;;
  esac
done
[[ -n "$OURS_STDIO$OURS_HTTP" ]] || ((BUILD_ONLY)) || { usage >&2; die "give --stdio and/or --http"; }
[[ -z "$OURS_HTTP" || "$OURS_HTTP" == *PORT* ]] || die "--http command must contain PORT (where the port number goes)"
case "$PROTOCOL" in
  both) PROTOCOLS=(2025-11-25 2026-07-28) ;;
  2025-11-25|2026-07-28) PROTOCOLS=("$PROTOCOL") ;;
  *) die "--protocol must be 2025-11-25, 2026-07-28 or both" ;;
esac
[[ "$NAME" =~ ^[A-Za-z0-9._-]+$ && "$NAME" != baseline && "$NAME" != rmcp ]] \
  || die "--name: letters, digits, . _ - only, and not baseline/rmcp"
[[ "$HTTP_PATH" == /* ]] || die "--http-path must start with /"

if ((QUICK)); then
  : "${SEQ:=2000}" "${PIPELINED:=20000}" "${MAX_SECS:=1.5}" "${DURATION:=1}" "${WARMUP:=0.3}" "${STARTUP_RUNS:=1}"
  ROUNDS="${ROUNDS_ARG:-1}"
else
  ROUNDS="${ROUNDS_ARG:-3}"
fi
SEQ="${SEQ:-10000}" PIPELINED="${PIPELINED:-100000}" WINDOW="${WINDOW:-64}" MAX_SECS="${MAX_SECS:-3}"
CONNS="${CONNS:-1,16,64}" DURATION="${DURATION:-3}" WARMUP="${WARMUP:-0.5}" STARTUP_RUNS="${STARTUP_RUNS:-3}"
PORT_BASE="${PORT_BASE:-18700}" PIN="${PIN:-}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive whole number"
[[ "$PORT_BASE" =~ ^[0-9]+$ ]] && ((PORT_BASE > 0 && PORT_BASE < 65533)) || die "PORT_BASE must be a port number"

# split_words STRING: the words of STRING, shell-style quoting, no expansion, into WORDS.
split_words() {
  WORDS=()
  [[ -n "${1//[[:space:]]/}" ]] || return 0
  printf '%s' "$1" | xargs printf '%s\0' >/dev/null || die "cannot split command (unbalanced quotes?): $1"
  mapfile -d '' -t WORDS < <(printf '%s' "$1" | xargs printf '%s\0')
}
# Check your commands (they split, they name a program) before anything is built.
for cmd in "$OURS_STDIO" "${OURS_HTTP//PORT/1}"; do
  [[ -n "$cmd" ]] || continue
  split_words "$cmd"
  ((${#WORDS[@]})) || die "empty command"
  if [[ "${WORDS[0]}" == */* ]]; then
    [[ -x "${WORDS[0]}" ]] || die "not an executable: ${WORDS[0]} (build your server first; paths are relative to $PWD)"
  else
    command -v "${WORDS[0]}" >/dev/null || die "not found on PATH: ${WORDS[0]}"
  fi
done

# ------------------------------------------------------------------ where things go
BENCH_HOME="${BENCH_HOME:-target/peer-bench}"
[[ "$BENCH_HOME" == /* ]] || BENCH_HOME="$PWD/$BENCH_HOME"
# Compare physical paths (.., symlinks resolved) before creating anything.
here_real="$(cd -P "$HERE" && pwd -P)"
home_real="$(realpath -m "$BENCH_HOME" 2>/dev/null || printf '%s' "$BENCH_HOME")"
case "$home_real/" in
  "$here_real"/*) die "BENCH_HOME ($BENCH_HOME) is inside the script's folder; run from your project root or set BENCH_HOME elsewhere" ;;
esac
mkdir -p "$BENCH_HOME"
BENCH_HOME="$(cd "$BENCH_HOME" && pwd)"
BIN="$BENCH_HOME/target/release"

# ------------------------------------------------------------------ build
if [[ "$SKIP_BUILD" != 1 ]]; then
  log "building mcp-bench, baseline, rmcp-echo (release) into $BENCH_HOME/target (first time: a few minutes)"
  t0=$(date +%s)
  # Each is a crate of its own (not a member of the repository's workspace);
  # --locked: the versions in its Cargo.lock, which stays untouched.
  for p in driver baseline rmcp-echo; do
    (cd "$HERE" && CARGO_TARGET_DIR="$BENCH_HOME/target" cargo build --release --locked --quiet \
      --manifest-path "$HERE/$p/Cargo.toml") || die "building $p failed"
  done
  log "build done in $(($(date +%s) - t0)) s"
fi
for b in mcp-bench baseline rmcp-echo; do
  [[ -x "$BIN/$b" ]] || die "$BIN/$b missing (drop --skip-build)"
done
BENCH="$BIN/mcp-bench"
if ((BUILD_ONLY)); then
  printf '%s\n' "$BENCH" "$BIN/baseline" "$BIN/rmcp-echo"
  exit 0
fi

# ------------------------------------------------------------------ servers
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RUN_DIR="$BENCH_HOME/runs/$STAMP"
mkdir -p "$RUN_DIR"
JSONL="$RUN_DIR/results.jsonl" TABLE="$RUN_DIR/table.md"
SERVER_LOG="$RUN_DIR/servers.log" DRIVER_LOG="$RUN_DIR/driver.log"
: > "$JSONL"
SERVERS=(baseline rmcp "$NAME")
# server_cmds NAME: sets STDIO_CMD / HTTP_CMD (strings; HTTP with PORT) for that server.
server_cmds() {
  case "$1" in
    baseline) STDIO_CMD="\"$BIN/baseline\" stdio"; HTTP_CMD="\"$BIN/baseline\" http PORT"; HTTP_URL_PATH=/mcp ;;
    rmcp) STDIO_CMD="\"$BIN/rmcp-echo\" stdio-pipes"; HTTP_CMD="\"$BIN/rmcp-echo\" http PORT"; HTTP_URL_PATH=/mcp ;;
    *) STDIO_CMD="$OURS_STDIO"; HTTP_CMD="$OURS_HTTP"; HTTP_URL_PATH="$HTTP_PATH" ;;
  esac
}

n=${#SERVERS[@]} np=${#PROTOCOLS[@]} failed=0
log "measuring baseline, rmcp, $NAME x ${PROTOCOLS[*]} x $ROUNDS round(s) -> $RUN_DIR"
t_start=$(date +%s)
for ((round = 1; round <= ROUNDS; round++)); do
  for ((k = 0; k < n; k++)); do
    # rotate the order each round, so no server always runs first or last
    i=$(((k + round - 1) % n))
    name="${SERVERS[$i]}"
    server_cmds "$name"
    port=$((PORT_BASE + i))
    for ((q = 0; q < np; q++)); do
      proto="${PROTOCOLS[$(((q + round - 1) % np))]}"
      common=(--name "$name" --round "$round" --protocol-version "$proto" --jsonl "$JSONL"
        --startup-runs "$STARTUP_RUNS" --server-log "$SERVER_LOG")
      [[ -n "$PIN" ]] && common+=(--pin "$PIN")
      if [[ -n "$OURS_STDIO" ]]; then
        log "round $round/$ROUNDS: $name stdio $proto"
        split_words "$STDIO_CMD"
        "$BENCH" stdio "${common[@]}" --seq "$SEQ" --pipelined "$PIPELINED" --window "$WINDOW" \
          --max-secs "$MAX_SECS" -- "${WORDS[@]}" >/dev/null 2>>"$DRIVER_LOG" \
          || { failed=1; log "  $name stdio $proto: reported failures (see the table and $DRIVER_LOG)"; }
      fi
      if [[ -n "$OURS_HTTP" ]]; then
        log "round $round/$ROUNDS: $name http $proto (port $port)"
        split_words "${HTTP_CMD//PORT/$port}"
        "$BENCH" http "${common[@]}" --url "http://127.0.0.1:$port$HTTP_URL_PATH" --conns "$CONNS" \
          --duration "$DURATION" --warmup "$WARMUP" -- "${WORDS[@]}" >/dev/null 2>>"$DRIVER_LOG" \
          || { failed=1; log "  $name http $proto: reported failures (see the table and $DRIVER_LOG)"; }
      fi
    done
  done
done
log "measurements took $(($(date +%s) - t_start)) s"

# ------------------------------------------------------------------ report
rmcp_version="$(awk '$0 == "name = \"rmcp\"" {getline; gsub(/version = |"/, ""); print; exit}' "$HERE/rmcp-echo/Cargo.lock")"
cpu_model="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
{
  echo "# $NAME vs rmcp vs the floor"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores${cpu_model:+ ($cpu_model)}; $(rustc --version 2>/dev/null | cut -d' ' -f1-2); rmcp $rmcp_version."
  echo "Settings: $ROUNDS round(s), server order rotated each round; protocols ${PROTOCOLS[*]};"
  [[ -n "$OURS_STDIO" ]] && echo "stdio: $SEQ sequential calls, $PIPELINED pipelined ($WINDOW in flight), each phase capped at ${MAX_SECS}s;"
  [[ -n "$OURS_HTTP" ]] && echo "HTTP: connections $CONNS, ${WARMUP}s warm-up + ${DURATION}s measured per level;"
  echo "startup: median of $STARTUP_RUNS spawn(s), exec → initialize reply (2025-11-25) or server/discover reply (2026-07-28)."
  echo
  echo "Servers: \`baseline\` = the floor (serde_json + tokio on stdio, hyper on HTTP; no framework);"
  echo "\`rmcp\` = rmcp-echo (stdio: \`stdio_pipes()\`; HTTP: StreamableHttpService, stateless, JSON responses);"
  printf '`%s` =' "$NAME"
  [[ -n "$OURS_STDIO" ]] && printf ' stdio `%s`' "$OURS_STDIO"
  [[ -n "$OURS_STDIO" && -n "$OURS_HTTP" ]] && printf ';'
  [[ -n "$OURS_HTTP" ]] && printf ' HTTP `%s`' "$OURS_HTTP"
  echo "."
  echo
} > "$TABLE.head"
"$BENCH" report --compare "$NAME,rmcp,baseline" "$JSONL" > "$TABLE.main"
"$BENCH" report --compare "$NAME,rmcp,baseline" --spread "$JSONL" > "$TABLE.spread"
{
  cat "$TABLE.head" "$TABLE.spread"
  echo "Raw records: \`results.jsonl\`; server stderr: \`servers.log\`; driver stderr: \`driver.log\` (this folder)."
} > "$TABLE"
cp "$TABLE" "$BENCH_HOME/latest.md"
cat "$TABLE.head" "$TABLE.main"
rm -f "$TABLE.head" "$TABLE.main" "$TABLE.spread"
echo "Full report with the spread over rounds: $TABLE"
echo "Raw JSON lines: $JSONL"
exit "$failed"
