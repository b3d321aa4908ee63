#!/usr/bin/env python3
"""Memory under attack: runs each attack of issue 16 against a fresh release
example server on 127.0.0.1 and prints its peak RSS (VmHWM) per attack.

Run through scripts/attack-memory.sh (it builds the examples and raises the
file-descriptor limit). Every attack is bounded in count and time and only
ever targets 127.0.0.1.

usage: attack_memory.py TARGET_DIR [ATTACK...]
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
TARGET = sys.argv[1] if len(sys.argv) > 1 else "target/release/examples"
ONLY = set(sys.argv[2:])


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0  # kB -> MiB
    return float("nan")


class Server:
    def __init__(self, example, *args):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [f"{TARGET}/{example}", "--http", f"{HOST}:{self.port}", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"{example} did not start")

    def hwm(self):
        return status(self.proc.pid, "VmHWM")

    def rss(self):
        return status(self.proc.pid, "VmRSS")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def request(port, body, headers=(), keep_alive=False):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
        "Connection: " + ("keep-alive" if keep_alive else "close"),
    ]
    head += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def post(port, body, headers=(), timeout=10):
    """One request on its own connection; (status, headers, body) or None."""
    try:
        s = socket.create_connection((HOST, port), timeout=timeout)
        s.sendall(request(port, body, headers))
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
    except OSError:
        return None
    if b"\r\n\r\n" not in buf:
        return None
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status_code = int(lines[0].split()[1])
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return status_code, hdrs, rest


def init(capabilities=None):
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "attack", "version": "1"},
        },
    }


def session(port, capabilities=None, headers=()):
    r = post(port, init(capabilities), headers)
    if not r or "mcp-session-id" not in r[1]:
        return None
    sid = r[1]["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    post(port, note, [("Mcp-Session-Id", sid), *headers])
    return sid


def legit_call(port, headers=()):
    """A legitimate client: initialize, then echo. True when answered."""
    sid = session(port, headers=headers)
    if sid is None:
        return False
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "legit"}},
    }
    r = post(port, call, [("Mcp-Session-Id", sid), *headers])
    return bool(r and r[0] == 200 and b"legit" in r[2])


def open_unread(port, body, headers):
    """Sends a keep-alive request and never reads the answer."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(5)
    s.connect((HOST, port))
    s.sendall(request(port, body, headers, keep_alive=True))
    return s


ACCEPT_BOTH = ("Accept", "application/json, text/event-stream")


def slow_call(i, token):
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {
            "name": "slow",
            "arguments": {"steps": 100, "delay_ms": 1},
            "_meta": {"progressToken": token},
        },
    }


def attack_progress(results):
    srv = Server("demo")
    base = srv.hwm()
    held = []
    refused = 0
    for n, token in ((24, "t" * 900_000), (24, "t" * 256)):
        for i in range(n):
            sid = session(srv.port)
            try:
                held.append(
                    open_unread(
                        srv.port,
                        slow_call(i, token),
                        [ACCEPT_BOTH, ("Mcp-Session-Id", sid or "")],
                    )
                )
            except OSError:
                refused += 1
    time.sleep(3)  # 100 steps of 1 ms: every call has sent everything
    served = legit_call(srv.port)
    results.append(
        ("progress amplification: 24 slow calls with a 0.9 MB progressToken + 24 with "
         "a 256-byte one, streams never read", base, srv.hwm(), f"legit client served: {served}")
    )
    for s in held:
        s.close()
    srv.stop()


def attack_elicitation(results):
    for who, attacker, legit in (
        ("anonymous attacker and client", (), ()),
        ("attacker and client with their own Authorization", (("Authorization", "Bearer mallory"),),
         (("Authorization", "Bearer alice"),)),
    ):
        elicitation_round(results, who, attacker, legit)


def elicitation_round(results, who, attacker, legit):
    srv = Server("demo")
    base = srv.hwm()
    held = []
    for c in range(16):
        sid = session(srv.port, {"elicitation": {}}, attacker)
        batch = [
            {
                "jsonrpc": "2.0",
                "id": c * 100 + i,
                "method": "tools/call",
                "params": {"name": "confirm", "arguments": {}},
            }
            for i in range(16)
        ]
        held.append(
            open_unread(srv.port, batch, [ACCEPT_BOTH, ("Mcp-Session-Id", sid or ""), *attacker])
        )
    time.sleep(1)
    served = legit_call(srv.port, legit)
    results.append(
        (f"16 connections x batch of 16 confirm, elicitation never answered ({who})", base,
         srv.hwm(), f"legit client served: {served}")
    )
    for s in held:
        s.close()
    srv.stop()


def attack_idle_connections(results):
    srv = Server("demo")
    base = srv.hwm()
    held = []
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    opened = 0
    start = time.time()
    for i in range(10_000):
        try:
            s = socket.create_connection((HOST, srv.port), timeout=5)
        except OSError:
            break
        opened += 1
        # One in ten has had a request answered (idle keep-alive); the rest
        # never send anything (slowloris-like).
        if i % 10 == 0:
            try:
                s.sendall(request(srv.port, ping, keep_alive=True))
                s.recv(4096)
            except OSError:
                pass
        held.append(s)
        if time.time() - start > 60:
            break
    peak_during = srv.hwm()
    served = legit_call(srv.port)
    # How many of ours the server closed (a closed one reads EOF at once).
    closed = 0
    for s in held:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    results.append(
        (f"{opened} concurrent idle connections (1 in 10 after a ping), then a legitimate call",
         base, max(peak_during, srv.hwm()),
         f"legit client served: {served}; {closed} of ours closed by the server")
    )
    for s in held:
        s.close()
    srv.stop()


def attack_sessions(results):
    srv = Server("demo")
    base = srv.hwm()
    created = 0
    for _ in range(10_000):
        r = post(srv.port, init())
        if r and "mcp-session-id" in r[1]:
            created += 1
    served = legit_call(srv.port)
    results.append(
        (f"10,000 abandoned sessions ({created} initialize answered with a session)", base,
         srv.hwm(), f"legit client served: {served}")
    )
    srv.stop()


def attack_stateless_subscribe(results):
    srv = Server("conformance", "--stateless")
    base = srv.hwm()
    sub = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/subscribe",
        "params": {"uri": "test://watched-resource"},
    }
    ok = 0
    rss_2k = None
    for i in range(20_000):
        r = post(srv.port, sub, [ACCEPT_BOTH])
        if r and r[0] == 200:
            ok += 1
        if i == 1999:
            rss_2k = srv.rss()
    results.append(
        (f"20,000 legacy resources/subscribe without sessions ({ok} answered 200)", base,
         srv.hwm(), f"RSS after 2,000: {rss_2k:.1f} MiB, after 20,000: {srv.rss():.1f} MiB")
    )
    srv.stop()


def attack_stdio_batches(results):
    proc = subprocess.Popen(
        [f"{TARGET}/demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,  # never read
        stderr=subprocess.DEVNULL,
    )
    first = json.dumps(init()).encode() + b"\n"
    proc.stdin.write(first)
    proc.stdin.flush()
    time.sleep(0.3)
    base = status(proc.pid, "VmHWM")
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "x" * 100}}}
        for i in range(200)
    ]
    line = json.dumps(batch).encode() + b"\n"
    written = [0]

    def writer():
        try:
            for _ in range(3000):
                proc.stdin.write(line)
                written[0] += 1
        except (BrokenPipeError, ValueError, OSError):
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    # The server stops reading once its output is full; wait until writing
    # stalls (or everything is written), at most 30 s.
    last, still = -1, 0
    deadline = time.time() + 30
    while time.time() < deadline and t.is_alive():
        time.sleep(0.5)
        if written[0] == last:
            still += 1
            if still >= 4:
                break
        else:
            last, still = written[0], 0
    peak = status(proc.pid, "VmHWM")
    results.append(
        (f"stdio: batches of 200 calls, stdout never read ({written[0]} of 3000 lines "
         f"({written[0] * len(line) / 1e6:.0f} MB) accepted before the pipe stalled)",
         base, peak, "")
    )
    proc.kill()
    proc.wait()


ATTACKS = [
    ("progress", attack_progress),
    ("elicitation", attack_elicitation),
    ("idle", attack_idle_connections),
    ("sessions", attack_sessions),
    ("subscribe", attack_stateless_subscribe),
    ("stdio", attack_stdio_batches),
]


def main():
    results = []
    for name, run in ATTACKS:
        if ONLY and name not in ONLY:
            continue
        t = time.time()
        run(results)
        print(f"# {name}: {time.time() - t:.1f} s", file=sys.stderr, flush=True)
    print("| attack | RSS at start (MiB) | peak RSS (MiB) | notes |")
    print("|---|---:|---:|---|")
    for what, base, peak, notes in results:
        print(f"| {what} | {base:.1f} | {peak:.1f} | {notes} |")


if __name__ == "__main__":
    main()
