#!/usr/bin/env bash
# The MCP Apps browser test: examples/apps over HTTP on a loopback port, its
# view opened in headless Chromium inside a host page built on the official
# AppBridge (run.mjs says what is checked). Prints PASS or FAIL last; exit
# code 0 or 1. Needs node/npm and Chromium (/usr/bin/chromium, or $CHROMIUM;
# on Debian `apt-get install chromium`).
#
# usage: tests/apps/run.sh PATH/TO/examples/apps
set -euo pipefail

EXAMPLE="${1:?usage: tests/apps/run.sh PATH/TO/examples/apps}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

fail() { echo "FAIL: $*"; exit 1; }
test -x "$EXAMPLE" || fail "$EXAMPLE is not an executable (cargo build --example apps)"
test -x "$CHROMIUM" || fail "$CHROMIUM missing (apt-get install chromium)"
command -v node >/dev/null || fail "node missing"

echo "apps-browser: npm ci in $HERE"
# --ignore-scripts: nothing is downloaded at install time (esbuild finds
# its platform binary in its optional dependency without its postinstall).
(cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
  fail "npm ci in tests/apps"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Port 0: the system picks a free one; the example prints its endpoint.
: >"$WORK/server.log"
"$EXAMPLE" --http 127.0.0.1:0 2>"$WORK/server.log" &
SERVER_PID=$!
URL=""
for _ in $(seq 1 100); do
  URL="$(sed -n 's/.*MCP endpoint: \(http[^ ]*\).*/\1/p' "$WORK/server.log" | head -1 || true)"
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "apps-browser: the example's stderr:"; cat "$WORK/server.log"
  fail "examples/apps did not print its MCP endpoint within 10 s"
fi
echo "apps-browser: examples/apps at $URL"

rc=0
node "$HERE/run.mjs" "$URL" "$CHROMIUM" "$WORK/chromium-profile" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "apps-browser: the example's stderr:"; tail -50 "$WORK/server.log"
  # run.mjs printed the FAIL line; one more in case it died before.
  echo "FAIL: tests/apps/run.mjs exited with $rc"
  exit 1
fi
