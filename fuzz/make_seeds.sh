#!/usr/bin/env bash
# Rebuilds the seed corpora fuzz/seeds/<target>/ from
#   - fuzz/seeds/requests.jsonl: hand-written JSON-RPC lines, both protocol
#     eras (one request, notification, response or batch per line);
#   - optionally the test traces: every message the test clients received
#     (server responses, notifications and server->client requests), as
#     `MCP_TRACE_DIR=DIR cargo test -p mcp-core --features trace` writes them
#     (JSON lines {"revision","method","message"}; see mcp-core/src/testing/trace.rs).
#
# Usage (from anywhere):
#   fuzz/make_seeds.sh                   # requests.jsonl only
#   fuzz/make_seeds.sh --traces DIR      # plus the messages of DIR/*.jsonl
#   fuzz/make_seeds.sh --run-tests       # run the traced tests first, then as --traces
#
# Output is deterministic (same inputs, same files), so the committed seeds
# can be regenerated and diffed.
set -euo pipefail
FUZZ="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TRACES=""
case "${1:-}" in
  --traces) TRACES="${2:?--traces needs a directory}" ;;
  --run-tests)
    TRACES="$FUZZ/target/seed-traces"
    rm -rf "$TRACES"
    (cd "$FUZZ/.." && MCP_TRACE_DIR="$TRACES" cargo test -q -p mcp-core --features trace >/dev/null)
    ;;
  "") ;;
  *) echo "usage: $0 [--traces DIR | --run-tests]" >&2; exit 2 ;;
esac

python3 - "$FUZZ/seeds" "$TRACES" <<'PY'
import glob, hashlib, json, os, shutil, sys

seeds, traces = sys.argv[1], sys.argv[2]
lines = [l.rstrip("\n") for l in open(os.path.join(seeds, "requests.jsonl"), encoding="utf-8") if l.strip()]
messages = [json.loads(l) for l in lines]
# Lines by their request id (the first with that id).
by_id = {}
for l, m in zip(lines, messages):
    if isinstance(m, dict) and "method" in m:
        by_id.setdefault(json.dumps(m.get("id")), l)
req = lambda i: by_id[json.dumps(i)]
PING, LIST, ECHO, PROGRESS, CONFIRM = req(2), req(3), req(5), req(8), req(9)

# Trace messages: distinct by (method, shape of the message's keys), at most
# 80, so the corpus stays small and varied.
trace_msgs = []
if traces:
    seen = set()
    for path in sorted(glob.glob(os.path.join(traces, "*.jsonl"))):
        for raw in open(path, encoding="utf-8"):
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            msg = entry.get("message")
            if not isinstance(msg, (dict, list)):
                continue
            result = msg.get("result") if isinstance(msg, dict) else None
            shape = (entry.get("method"), tuple(sorted(msg)) if isinstance(msg, dict) else "batch",
                     tuple(sorted(result)) if isinstance(result, dict) else None)
            if shape in seen:
                continue
            seen.add(shape)
            trace_msgs.append(json.dumps(msg, separators=(",", ":"), sort_keys=True))
    trace_msgs = sorted(trace_msgs, key=lambda s: hashlib.sha1(s.encode()).hexdigest())[:80]

def reset(target):
    d = os.path.join(seeds, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d

def write(d, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def label(msg):
    m = msg[0] if isinstance(msg, list) and msg else msg
    method = m.get("method") if isinstance(m, dict) else None
    if isinstance(msg, list):
        return "batch"
    if method is None:
        return "response" if isinstance(m, dict) and ("result" in m or "error" in m) else "other"
    return method.replace("/", "_")

# Malformed frames: parse errors, depth, encoding, framing leftovers.
malformed = {
    "truncated": lines[0][: len(lines[0]) // 2],
    "trailing-garbage": PING + " x",
    "two-values": PING + LIST,
    "deep": "[" * 200 + "]" * 200,
    "deep-object": '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + '{"a":' * 150 + "1" + "}" * 151,
    "bad-utf8": b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}',
    "bom": "\ufeff" + PING,
    "empty": "",
    "whitespace": " \t\r",
    "number": "42",
    "string-id-escape": '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    "big-number-id": '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    "dup-keys": '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","method":"tools/list"}',
}

# handle_frame: every line, the malformed frames, the trace messages.
d = reset("handle_frame")
for i, (line, msg) in enumerate(zip(lines, messages)):
    write(d, f"{i:03}-{label(msg)}.json", line)
for name, data in malformed.items():
    write(d, f"bad-{name}", data)
for i, t in enumerate(trace_msgs):
    write(d, f"trace-{i:03}.json", t)

# dispatch_payload: valid JSON only (the target skips the rest).
d = reset("dispatch_payload")
for i, (line, msg) in enumerate(zip(lines, messages)):
    write(d, f"{i:03}-{label(msg)}.json", line)
for i, t in enumerate(trace_msgs):
    write(d, f"trace-{i:03}.json", t)

# stdio_framing: whole conversations. A legacy session (initialize,
# initialized, then the request) per line, everything in one stream, the
# 2026-07-28 lines alone, and framing cases around the 4 KiB line limit.
d = reset("stdio_framing")
init, initialized = lines[0], '{"jsonrpc":"2.0","method":"notifications/initialized"}'
for i, (line, msg) in enumerate(zip(lines, messages)):
    if line in (init, initialized):
        continue
    write(d, f"{i:03}-{label(msg)}.jsonl", "\n".join([init, initialized, line]) + "\n")
write(d, "all.jsonl", "\n".join(lines) + "\n")
modern = [l for l in lines if "2026-07-28" in l]
write(d, "modern.jsonl", "\n".join(modern) + "\n")
echo = lambda n: '{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' + "a" * n + '"}}}'
write(d, "line-just-under-limit.jsonl", echo(4096 - len(echo(0)) - 1) + "\n" + PING + "\n")
write(d, "line-over-limit.jsonl", "\n".join([init, echo(5000), PING]) + "\n")
write(d, "crlf.jsonl", "\r\n".join([init, initialized, LIST, ECHO]) + "\r\n")
write(d, "blank-lines.jsonl", "\n\n" + init + "\n\n\n" + PING + "\n\n")
write(d, "no-final-newline.jsonl", init + "\n" + PING)
write(d, "garbage-between.jsonl", "\n".join([init, "not json", PING, "{", LIST]) + "\n")
write(d, "confirm-answered.jsonl", "\n".join([init, initialized, CONFIRM,
      '{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"confirm":true}}}',
      '{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"confirm":true}}}']) + "\n")
write(d, "cancel-running.jsonl", "\n".join([init, initialized, CONFIRM,
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}', PING]) + "\n")

# http_request: two flag bytes (see fuzz_targets/http_request.rs), then the body.
d = reset("http_request")
def http(name, a, b, body):
    write(d, name, bytes([a, b]) + body.encode("utf-8"))
for i, (line, msg) in enumerate(zip(lines, messages)):
    is_modern = "2026-07-28" in line
    if is_modern:
        # MCP-Protocol-Version 2026-07-28 + the routing headers from the body.
        http(f"{i:03}-{label(msg)}-modern", 0x08 | 0x40, 0x00, line)
    else:
        http(f"{i:03}-{label(msg)}-stateless", 0x00, 0x00, line)
        # Sessions on: the request runs in an initialized session.
        http(f"{i:03}-{label(msg)}-session", 0x20 | 0x04, 0x00, line)
http("get-stream", 0x20 | 0x02, 0x02, "")
http("get-stateless", 0x02, 0x02, "")
http("delete-session", 0x20, 0x03, "")
http("bogus-session", 0x20, 0x20, PING)
http("no-session", 0x20, 0x10, PING)
http("wrong-content-type", 0x10, 0x00, PING)
http("foreign-origin", 0x80, 0x00, PING)
http("foreign-host", 0x00, 0x04, PING)
http("other-path", 0x00, 0x08, PING)
http("accept-json-only", 0x01, 0x00, PROGRESS)
http("accept-sse-only", 0x02, 0x00, PROGRESS)
http("no-accept", 0x03, 0x00, PING)
http("bad-json", 0x00, 0x00, malformed["truncated"])
http("empty-body", 0x00, 0x00, "")
http("last-event-id", 0x20 | 0x02, 0x82, "")
http("authorization", 0x00, 0x40, LIST)
http("version-header-mismatch", 0x08, 0x00, LIST)

# tool_arguments: a byte picking the tool (see fuzz_targets/tool_arguments.rs),
# then the `arguments` text: valid ones, each kind of mistake, and the
# shapes the checker reads apart (alternatives, nulls, wide numbers).
d = reset("tool_arguments")
TOOL = {"echo": 0, "search": 1, "strict": 2, "numbers": 3, "nested": 4, "misc": 5}
arguments = [
    ("echo", "ok", '{"text":"hi"}'),
    ("echo", "escapes", '{"text":"caf\\u00e9 \\"q\\" \\n"}'),
    ("echo", "missing", "{}"),
    ("echo", "wrong-type", '{"text":1}'),
    ("echo", "unknown-key", '{"text":"hi","extra":null}'),
    ("echo", "duplicate-key", '{"text":"a","text":"b"}'),
    ("echo", "spaces", ' { "text" : "hi" } '),
    ("search", "all", '{"query":"q","limit":7,"mode":"fast","tags":["a"],"filter":{"language":"en","min_score":0.5},"ratio":1,"exact":true}'),
    ("search", "over-range", '{"query":"q","limit":300}'),
    ("search", "negative", '{"query":"q","limit":-1}'),
    ("search", "fraction", '{"query":"q","limit":2.5}'),
    ("search", "exponent", '{"query":"q","limit":1e2}'),
    ("search", "bad-enum", '{"query":"q","mode":"medium"}'),
    ("search", "bad-item", '{"query":"q","tags":["a",2]}'),
    ("search", "nulls", '{"query":"q","filter":null,"mode":null,"exact":null}'),
    ("search", "empty-filter", '{"query":"q","filter":{}}'),
    ("strict", "ok", '{"id":1,"level":5}'),
    ("strict", "range", '{"id":1,"level":10}'),
    ("strict", "closed", '{"id":1,"level":5,"more":true}'),
    ("strict", "unsigned", '{"id":-1,"level":5,"note":"n"}'),
    ("numbers", "ok", '{"a":-128,"b":18446744073709551615,"c":-170141183460469231731687303715884105728,"e":1.5e3,"f":0}'),
    ("numbers", "overflow", '{"a":128,"b":18446744073709551616,"c":1,"e":0,"f":-0}'),
    ("numbers", "floats", '{"a":1.0,"b":2E0,"c":3e-0,"d":65535,"e":-0.0,"f":4}'),
    ("nested", "ok", '{"items":[{"name":"a","count":2,"modes":["fast","slow"]}],"pair":[1,"x"],"labels":{"k":1},"shape":{"kind":"circle","radius":2},"who":7,"grid":[[1,2],[]]}'),
    ("nested", "tuple-length", '{"items":[],"pair":[1,"x",3]}'),
    ("nested", "tagged", '{"items":[],"shape":{"kind":"square","side":-1}}'),
    ("nested", "untagged", '{"items":[],"who":"name"}'),
    ("nested", "map-value", '{"items":[],"labels":{"k":"v"}}'),
    ("nested", "deep-item", '{"items":[{"name":"a","modes":["fast",1]}]}'),
    ("nested", "grid", '{"items":[{"name":"b"}],"grid":[[256]]}'),
    ("misc", "ok", '{"big":340282366920938463463374607431768211455,"letter":"x","any":{"a":[1,null]},"extra":{"Level":3,"k":"v"},"small":-5}'),
    ("misc", "alias", '{"extra":{"lvl":3}}'),
    ("misc", "letters", '{"letter":"xy"}'),
    ("misc", "small", '{"big":-1,"small":40000}'),
]
for tool, name, text in arguments:
    write(d, f"{tool}-{name}", bytes([TOOL[tool]]) + text.encode("utf-8"))

for target in ("handle_frame", "dispatch_payload", "stdio_framing", "http_request", "tool_arguments"):
    print(f"{target}: {len(os.listdir(os.path.join(seeds, target)))} seeds")
PY
