#!/usr/bin/env python3
"""A loopback OTLP/HTTP receiver that accepts every export and keeps nothing.

It stands in for a collector when measuring what exporting costs a server
(BENCHMARKS.md, "OpenTelemetry"): point the server's
OTEL_EXPORTER_OTLP_ENDPOINT at it. Each POST to /v1/traces, /v1/metrics or
/v1/logs is read whole and answered 200 with an empty export response
(protobuf: zero bytes; JSON: `{}`); the counts of requests and bytes are
printed on exit (Ctrl-C or SIGTERM).

    python3 scripts/otlp_sink.py 4318
"""

import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS = {}


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 (the handler's name is http.server's)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        requests, size = COUNTS.get(self.path, (0, 0))
        COUNTS[self.path] = (requests + 1, size + len(body))
        json = "json" in (self.headers.get("Content-Type") or "")
        reply = b"{}" if json else b""
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if json else "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_args):
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 4318
    server = ThreadingHTTPServer(("127.0.0.1", port), Sink)

    def stop(*_args):
        for path, (requests, size) in sorted(COUNTS.items()):
            print(f"{path}: {requests} exports, {size} bytes", file=sys.stderr)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"OTLP sink on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
