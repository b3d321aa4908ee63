#!/usr/bin/env bash
# The OAuth interop test: a real authorization server (oidc-provider, pinned
# in package.json/package-lock.json here) issues JWT access tokens for
# examples/protected, and the official TypeScript and Python SDK clients
# complete their own OAuth flows against both (401 -> metadata -> token ->
# calls -> 403 insufficient_scope -> step-up -> the call succeeds):
#   ts_client.mjs       TS SDK v1, client credentials
#   ts_client_code.mjs  TS SDK v1, authorization code + PKCE
#   ts2_client_code.mjs TS SDK v2, authorization code + PKCE
#   py_client.py        Python SDK, client credentials
#   py_client_code.py   Python SDK, authorization code + PKCE
# then our own client (mcp-core/tests/oauth_oidc.rs, through cargo): dynamic
# registration, the code flow, step-up, and a second run that reuses the
# registration (this script checks the server registered one client).
# In the code flows a scripted "browser" (browser.mjs, and its Python twin in
# py_client_code.py) fills in the server's login and consent pages. Starts
# both servers on free loopback ports, stops them on exit; exits non-zero on
# any failure.
#
#   INTEROP_HOME=target/interop tests/interop/oauth/run.sh target/debug/examples
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
SHARED="${SHARED:-$(cd "$ROOT/.." && pwd)/shared}"
EX="${1:?usage: run.sh EXAMPLES_DIR}"
: "${INTEROP_HOME:?set INTEROP_HOME (the interop harness install, for the SDK client)}"

(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
LOGS="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

wait_for() { # FILE TEXT WHAT
  for _ in $(seq 1 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "FAIL: $3 did not start:" >&2; cat "$1" >&2; return 1
}

AS_PORT="$(free_port)"
MCP_PORT="$(free_port)"
ISSUER="http://127.0.0.1:$AS_PORT"
RESOURCE="http://127.0.0.1:$MCP_PORT/mcp"

node "$HERE/as.mjs" "$AS_PORT" "$RESOURCE" 2>"$LOGS/as.log" &
PIDS+=($!)
wait_for "$LOGS/as.log" "AS ready" "oidc-provider"

# notes:read is the baseline (named in the 401), notes:write a step-up.
"$EX/protected" --port "$MCP_PORT" --issuer "$ISSUER" --required-scope notes:read \
  2>"$LOGS/protected.log" &
PIDS+=($!)
wait_for "$LOGS/protected.log" "MCP endpoint" "examples/protected"

status=0
node --import "$SHARED/interop/lib/preload.mjs" "$HERE/ts_client.mjs" "$RESOURCE" "$ISSUER" || status=$?
node --import "$SHARED/interop/lib/preload.mjs" "$HERE/ts_client_code.mjs" "$RESOURCE" || status=$?
node --import "$SHARED/interop/lib/preload.mjs" "$HERE/ts2_client_code.mjs" "$RESOURCE" || status=$?
"$INTEROP_HOME/.venv/bin/python" "$HERE/py_client.py" "$RESOURCE" "$ISSUER" || status=$?
"$INTEROP_HOME/.venv/bin/python" "$HERE/py_client_code.py" "$RESOURCE" || status=$?

# --workspace: the features of `cargo test --workspace`, so CI reuses that build.
MARKER="$LOGS/oauth_oidc.passed"
(cd "$ROOT" && MCP_OIDC_RESOURCE="$RESOURCE" MCP_OIDC_BROWSER="node $HERE/browse.mjs" \
  MCP_OIDC_MARKER="$MARKER" "${CARGO:-cargo}" test -q --workspace --test oauth_oidc) || status=$?
if [ -f "$MARKER" ]; then
  echo "PASS mcp-core oauth: registered, stepped up, reused its registration in a second run"
else
  echo "FAIL mcp-core oauth: mcp-core/tests/oauth_oidc.rs did not pass"; status=1
fi
registered="$(grep -c 'AS client registered' "$LOGS/as.log" || true)"
if [ "$registered" = 1 ]; then
  echo "PASS mcp-core oauth: the authorization server registered one client in two runs"
else
  echo "FAIL mcp-core oauth: the authorization server registered $registered clients (expected 1)"; status=1
fi
if [ "$status" -ne 0 ]; then
  echo "-- authorization server log" >&2; cat "$LOGS/as.log" >&2
  echo "-- examples/protected log" >&2; cat "$LOGS/protected.log" >&2
fi
exit "$status"
