//! Scale-out proof for the stateless 2026-07-28 revision: example servers as
//! separate processes (`--http 127.0.0.1:0 --stateless`) behind a real nginx
//! load balancer, round-robin on loopback.
//!
//! - A multi round-trip `tools/call` (`input_required` + `requestState`)
//!   whose first round is served by one process and whose retry by another
//!   completes when both were given the same `MCP_REQUEST_STATE_KEY`.
//! - Without a shared key (a different configured key, or the default random
//!   per-process key) the other process refuses the state: nothing is shared
//!   implicitly.
//! - State a tool keeps in its own process memory (the calendar's events) is
//!   not seen by the other process, as the spec warns.
//!
//! nginx adds `X-Upstream: $upstream_addr` to every response, so each test
//! knows which process served each request. Every request goes on its own
//! connection (`Connection: close`), and nginx runs as a single process
//! (one round-robin state, and nothing left behind when it is killed), so
//! round robin alternates between the two processes.
//!
//! These tests are opt-in, so that `cargo test --workspace` passes on a
//! machine with only the Rust toolchain: they run when `MCP_TEST_NGINX=1`,
//! and then nginx is required (`/usr/sbin/nginx`): a missing binary fails
//! them, never skips them. Without the variable each test returns at once
//! and a line on stderr says they were not run and how to run them.
//! `.ci/run` installs nginx and sets the variable, and checks that every
//! test here passed: with `MCP_TEST_NGINX_MARKERS=DIR` set, each test that
//! passes writes `DIR/<test name>`.

#[path = "harness/nginx.rs"]
mod nginx;
#[path = "../mcp-core/tests/common/raw_http.rs"]
mod raw_http;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nginx::{spawn_example, KillOnDrop, LoadBalancer, NGINX};
use raw_http::{parse_response, Resp};
use serde_json::{json, Value};

/// Hang guard for anything that should happen promptly (process start-up,
/// one HTTP exchange).
const GUARD: Duration = Duration::from_secs(60);

/// `MCP_TEST_NGINX=1` runs these tests; unset (or `0`), they are not run.
const OPT_IN_ENV: &str = "MCP_TEST_NGINX";
/// A directory where each test that passes writes a file named after it.
const MARKERS_ENV: &str = "MCP_TEST_NGINX_MARKERS";
const MODERN: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const STATE_KEY_ENV: &str = "MCP_REQUEST_STATE_KEY";
const STATE_KEY_ID_ENV: &str = "MCP_REQUEST_STATE_KEY_ID";

/// The key every replica of the scale-out tests shares (32 bytes, hex).
const SHARED_KEY: &str = "5ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e007";
/// A different key (same default id `env`).
const OTHER_KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// ---------------------------------------------------------------- processes

/// One test of this file, run only when opted in (`MCP_TEST_NGINX=1`).
struct ScaleOutTest(&'static str);

impl ScaleOutTest {
    /// `None` (after saying so on stderr) unless `MCP_TEST_NGINX=1`; then
    /// fails (never skips) when nginx is not installed.
    fn opt_in(name: &'static str) -> Option<Self> {
        match std::env::var(OPT_IN_ENV).as_deref() {
            Ok("1") => {}
            Ok("" | "0") | Err(std::env::VarError::NotPresent) => {
                // Once per run, straight to the process's stderr (the test
                // harness captures `eprintln!` of a passing test), in one
                // write, on a line of its own.
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    let line = format!(
                        "\nscale_out: NOT RUN: the nginx-backed scale-out tests (two server \
                         replicas behind a load balancer) run only with {OPT_IN_ENV}=1. \
                         To run them: install nginx ({NGINX}; `apt-get install nginx` on \
                         Debian), then `{OPT_IN_ENV}=1 cargo test -p mcp-suite-tests --test scale_out`.\n"
                    );
                    let _ = std::io::stderr().write_all(line.as_bytes());
                });
                return None;
            }
            Ok(other) => panic!("{OPT_IN_ENV}={other:?}: expected 1 (run) or 0 / unset (skip)"),
            Err(e) => panic!("{OPT_IN_ENV}: {e}"),
        }
        assert!(
            Path::new(NGINX).exists(),
            "{OPT_IN_ENV}=1 but {NGINX} not found: these tests need nginx as the \
             load balancer. `.ci/run` installs it (`apt-get install -y nginx`, or \
             `nginx-light`); install it the same way to run them locally."
        );
        Some(Self(name))
    }

    /// Records that the test passed, in `$MCP_TEST_NGINX_MARKERS/<name>`.
    fn passed(self) {
        if let Some(dir) = std::env::var_os(MARKERS_ENV) {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir)
                .unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
            let marker = dir.join(self.0);
            std::fs::write(&marker, "passed\n")
                .unwrap_or_else(|e| panic!("writing {}: {e}", marker.display()));
        }
    }
}

/// One example server serving Streamable HTTP statelessly on a port the OS
/// picked.
struct Replica {
    process: KillOnDrop,
    addr: SocketAddr,
}

/// Which key a replica seals `requestState` with.
#[derive(Clone, Copy)]
enum Key {
    /// `MCP_REQUEST_STATE_KEY` set to this hex value.
    Env(&'static str),
    /// No key configured: the default random per-process key.
    PerProcess,
}

impl Replica {
    fn start(example: &str, key: Key) -> Self {
        let key = match key {
            Key::Env(hex) => Some(hex),
            Key::PerProcess => None,
        };
        let (process, addr) = spawn_example(
            example,
            &["--http", "127.0.0.1:0", "--stateless"],
            &[(STATE_KEY_ID_ENV, None), (STATE_KEY_ENV, key)],
        );
        Self { process, addr }
    }
}

// ---------------------------------------------------------------- raw client

/// What these tests read from a response.
trait ReadReply {
    fn upstream(&self) -> String;
    fn message(&self) -> Value;
    fn result(&self) -> Value;
}

impl ReadReply for Resp {
    /// The replica that served this response, as nginx reports it.
    fn upstream(&self) -> String {
        self.header("x-upstream")
            .unwrap_or_else(|| panic!("no X-Upstream header in {self:?}"))
            .to_owned()
    }

    /// The JSON-RPC response: the body itself, or the response event of an
    /// SSE stream.
    fn message(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        let sse = self
            .header("content-type")
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if !sse {
            return serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("body is not JSON ({e}): {text:?}"));
        }
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| {
                m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
            })
            .unwrap_or_else(|| panic!("no JSON-RPC response in the SSE stream {text:?}"))
    }

    fn result(&self) -> Value {
        let message = self.message();
        assert_eq!(self.status, 200, "HTTP status of {message}");
        message
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("expected a result: {message}"))
    }
}

/// POSTs a 2026-07-28 request to `addr` on a fresh connection (closed after
/// the response, so the next request is balanced anew) and reads the whole
/// response.
fn post_modern(addr: SocketAddr, id: u64, method: &str, name: &str, mut params: Value) -> Resp {
    params["_meta"] = json!({
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: {"elicitation": {}},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\n\
         Host: {addr}\r\n\
         MCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: {method}\r\n\
         Mcp-Name: {name}\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n\
         \r\n\
         {body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(GUARD)).expect("read timeout");
    stream
        .set_write_timeout(Some(GUARD))
        .expect("write timeout");
    stream
        .write_all(request.as_bytes())
        .expect("writing the request");
    let mut buf = Vec::new();
    stream
        .read_to_end(&mut buf)
        .unwrap_or_else(|e| panic!("hang guard or I/O error reading the response: {e}"));
    parse_response(&buf)
}

// ---------------------------------------------------------------- MRTR helpers

fn confirm_params() -> Value {
    json!({"name": "confirm", "arguments": {"message": "Scale out?"}})
}

/// First round of `confirm`: checks the `input_required` shape and returns
/// the `requestState`.
fn ask_confirm(lb: &LoadBalancer, id: u64) -> (Value, String) {
    let resp = post_modern(lb.addr, id, "tools/call", "confirm", confirm_params());
    let result = resp.result();
    assert_eq!(
        result["resultType"], "input_required",
        "expected input_required: {result}"
    );
    let request = &result["inputRequests"]["elicit-0"];
    assert_eq!(
        request["method"], "elicitation/create",
        "inputRequests: {result}"
    );
    let state = result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no string requestState: {result}"))
        .to_owned();
    (Value::String(state), resp.upstream())
}

/// The retry of `confirm` with the user's consent and the state.
fn retry_confirm(lb: &LoadBalancer, id: u64, state: &Value) -> Resp {
    let mut params = confirm_params();
    params["inputResponses"] =
        json!({"elicit-0": {"action": "accept", "content": {"confirm": true}}});
    params["requestState"] = state.clone();
    post_modern(lb.addr, id, "tools/call", "confirm", params)
}

fn assert_confirmed(resp: &Resp) {
    let result = resp.result();
    assert_eq!(result["resultType"], "complete", "result: {result}");
    assert_ne!(result["isError"], true, "result: {result}");
    assert_eq!(
        result["content"][0]["text"], "confirmed",
        "result: {result}"
    );
}

fn assert_invalid_state(resp: &Resp) {
    let message = resp.message();
    assert_eq!(resp.status, 400, "HTTP status of {message}");
    assert_eq!(message["error"]["code"], -32602, "{message}");
    let text = message["error"]["message"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Invalid requestState"),
        "expected Invalid requestState: {message}"
    );
}

fn replica_addrs(replicas: &[&Replica]) -> Vec<String> {
    replicas.iter().map(|r| r.addr.to_string()).collect()
}

// ---------------------------------------------------------------- tests

#[test]
fn mrtr_round_trip_completes_across_two_replicas_sharing_a_key() {
    let Some(test) =
        ScaleOutTest::opt_in("mrtr_round_trip_completes_across_two_replicas_sharing_a_key")
    else {
        return;
    };
    let mut a = Replica::start("demo", Key::Env(SHARED_KEY));
    let mut b = Replica::start("demo", Key::Env(SHARED_KEY));
    let mut lb = LoadBalancer::start(&[a.addr, b.addr]);
    let addrs = replica_addrs(&[&a, &b]);

    let (state, first) = ask_confirm(&lb, 1);
    assert!(
        state.as_str().is_some_and(|s| s.starts_with("v1.env.")),
        "sealed with the configured key id: {state}"
    );
    let resp = retry_confirm(&lb, 2, &state);
    let second = resp.upstream();

    assert!(addrs.contains(&first), "{first} is one of {addrs:?}");
    assert!(addrs.contains(&second), "{second} is one of {addrs:?}");
    assert_ne!(
        first, second,
        "the retry must be served by the other process"
    );
    assert_confirmed(&resp);

    a.process.assert_running();
    b.process.assert_running();
    lb.process.assert_running();
    test.passed();
}

#[test]
fn a_replica_with_a_different_key_rejects_the_state() {
    let Some(test) = ScaleOutTest::opt_in("a_replica_with_a_different_key_rejects_the_state")
    else {
        return;
    };
    let a = Replica::start("demo", Key::Env(SHARED_KEY));
    let b = Replica::start("demo", Key::Env(OTHER_KEY));
    let lb = LoadBalancer::start(&[a.addr, b.addr]);

    let (state, first) = ask_confirm(&lb, 1);
    let resp = retry_confirm(&lb, 2, &state);
    let second = resp.upstream();
    assert_ne!(first, second, "the retry must reach the other process");
    assert_invalid_state(&resp);

    // The state itself is sound: the process that sealed it (next in the
    // rotation) completes the call.
    let resp = retry_confirm(&lb, 3, &state);
    assert_eq!(resp.upstream(), first, "round robin back to the sealer");
    assert_confirmed(&resp);
    test.passed();
}

#[test]
fn replicas_with_the_default_per_process_key_share_nothing() {
    let Some(test) =
        ScaleOutTest::opt_in("replicas_with_the_default_per_process_key_share_nothing")
    else {
        return;
    };
    let a = Replica::start("demo", Key::PerProcess);
    let b = Replica::start("demo", Key::PerProcess);
    let lb = LoadBalancer::start(&[a.addr, b.addr]);

    let (state, first) = ask_confirm(&lb, 1);
    assert!(
        state.as_str().is_some_and(|s| s.starts_with("v1.proc.")),
        "sealed with the per-process key: {state}"
    );
    let resp = retry_confirm(&lb, 2, &state);
    assert_ne!(
        resp.upstream(),
        first,
        "the retry must reach the other process"
    );
    assert_invalid_state(&resp);

    let resp = retry_confirm(&lb, 3, &state);
    assert_eq!(resp.upstream(), first, "round robin back to the sealer");
    assert_confirmed(&resp);
    test.passed();
}

/// Titles of the events in a `calendar://week` read.
fn week_titles(resp: &Resp) -> Vec<String> {
    let result = resp.result();
    assert_eq!(result["resultType"], "complete", "result: {result}");
    let text = result["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text contents: {result}"));
    let events: Vec<Value> = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("week is not a JSON list ({e}): {text}"));
    events
        .iter()
        .map(|e| e["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn process_local_tool_state_is_not_seen_by_the_other_replica() {
    let Some(test) =
        ScaleOutTest::opt_in("process_local_tool_state_is_not_seen_by_the_other_replica")
    else {
        return;
    };
    let a = Replica::start("calendar", Key::PerProcess);
    let b = Replica::start("calendar", Key::PerProcess);
    let lb = LoadBalancer::start(&[a.addr, b.addr]);
    let title = "Scale-out review";

    let created = post_modern(
        lb.addr,
        1,
        "tools/call",
        "create_event",
        json!({"name": "create_event", "arguments": {"title": title, "startsAt": "2026-09-10T10:00:00Z"}}),
    );
    let writer = created.upstream();
    let result = created.result();
    assert_eq!(result["resultType"], "complete", "result: {result}");
    assert_ne!(result["isError"], true, "result: {result}");
    assert_eq!(
        result["structuredContent"]["title"], title,
        "result: {result}"
    );

    let read = || {
        post_modern(
            lb.addr,
            2,
            "resources/read",
            "calendar://week",
            json!({"uri": "calendar://week"}),
        )
    };
    // The other process never saw the write...
    let other = read();
    assert_ne!(
        other.upstream(),
        writer,
        "the read must reach the other process"
    );
    let titles = week_titles(&other);
    assert!(
        !titles.iter().any(|t| t == title),
        "the other process's calendar has the event: {titles:?}"
    );
    assert!(titles.iter().any(|t| t == "Standup"), "{titles:?}");

    // ...while the process that served the write has it.
    let same = read();
    assert_eq!(same.upstream(), writer, "round robin back to the writer");
    let titles = week_titles(&same);
    assert!(
        titles.iter().any(|t| t == title),
        "the writer's calendar lacks the event: {titles:?}"
    );
    test.passed();
}
