//! The raw HTTP client of the replica tests (`replicas.rs`): one request
//! per connection (`Connection: close`, so nginx balances each anew), the
//! whole response read, or an SSE response read event by event.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::raw_http::parse_response;
pub(crate) use super::raw_http::Resp;
use serde_json::{json, Value};

/// Hang guard for one exchange.
const GUARD: Duration = Duration::from_secs(30);
const MODERN: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The head of a POST to `/mcp` on `addr` (a fresh connection, closed after
/// the response).
pub(crate) fn head(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

pub(crate) fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(GUARD)).expect("read timeout");
    stream
        .set_write_timeout(Some(GUARD))
        .expect("write timeout");
    stream
}

/// POSTs `body` and reads the whole response.
pub(crate) fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut stream = connect(addr);
    stream
        .write_all(head(addr, headers, body).as_bytes())
        .expect("writing the head");
    // A body over the server's limit is refused before it is read: the
    // write may then fail, the response is there all the same.
    let _ = stream.write_all(body.as_bytes());
    let mut buf = Vec::new();
    if let Err(e) = stream.read_to_end(&mut buf) {
        assert!(
            !buf.is_empty(),
            "hang guard or I/O error reading the response: {e}"
        );
    }
    parse_response(&buf)
}

/// A 2026-07-28 request declaring the tasks extension, with an optional
/// `Authorization` (the fixture's principal).
pub(crate) fn modern(
    addr: SocketAddr,
    method: &str,
    name: &str,
    mut params: Value,
    auth: Option<&str>,
) -> Resp {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if !name.is_empty() {
        headers.push(("Mcp-Name", name));
    }
    if let Some(auth) = auth {
        headers.push(("Authorization", auth));
    }
    post(addr, &headers, &body)
}

/// The JSON-RPC message of a response (plain JSON, or the response event
/// of an SSE body).
pub(crate) fn message(resp: &Resp) -> Value {
    let text = String::from_utf8_lossy(&resp.body);
    if !resp
        .header("content-type")
        .is_some_and(|ct| ct.starts_with("text/event-stream"))
    {
        return serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {text:?} ({})", resp.status));
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {text:?}"))
}

pub(crate) fn result(resp: &Resp) -> Value {
    let message = message(resp);
    assert_eq!(resp.status, 200, "HTTP status of {message}");
    message
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("expected a result: {message}"))
}

pub(crate) fn error_code(resp: &Resp) -> i64 {
    let message = message(resp);
    message
        .pointer("/error/code")
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("expected an error: {message}"))
}

/// Starts `slow_compute` for `seconds` as a task through `addr`; its id.
pub(crate) fn start_task(addr: SocketAddr, seconds: u64, auth: Option<&str>) -> (String, Resp) {
    let params = json!({"name": "slow_compute", "arguments": {"seconds": seconds}});
    let resp = modern(addr, "tools/call", "slow_compute", params, auth);
    let created = result(&resp);
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().expect("a task id").to_owned();
    (id, resp)
}

pub(crate) fn get_task(addr: SocketAddr, id: &str, auth: Option<&str>) -> Resp {
    modern(addr, "tasks/get", "", json!({"taskId": id}), auth)
}

/// Polls `tasks/get` through `addr` until `done` holds (hang guard).
pub(crate) fn poll_until(
    addr: SocketAddr,
    id: &str,
    done: impl Fn(&Value, &Resp) -> bool,
) -> Value {
    let deadline = Instant::now() + GUARD;
    loop {
        let resp = get_task(addr, id, None);
        let task = result(&resp);
        if done(&task, &resp) {
            return task;
        }
        assert!(Instant::now() < deadline, "hang guard: task now {task}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The nginx upstream that served a response.
pub(crate) fn upstream(resp: &Resp) -> String {
    resp.header("x-upstream")
        .unwrap_or_else(|| panic!("no X-Upstream in {resp:?}"))
        .to_owned()
}

/// An SSE response read event by event (a listen, a GET stream).
pub(crate) struct Events {
    reader: BufReader<TcpStream>,
    headers: Vec<(String, String)>,
}

impl Events {
    pub(crate) fn open(addr: SocketAddr, request: &str) -> Self {
        let mut stream = connect(addr);
        stream
            .write_all(request.as_bytes())
            .expect("writing the request");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("the status line");
        assert!(status.contains(" 200"), "stream refused: {status}");
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a header line");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        Self { reader, headers }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The next JSON message whose `method` is `method` (others skipped;
    /// chunk sizes and SSE fields other than `data:` are ignored).
    pub(crate) fn next(&mut self, method: &str) -> Value {
        // Keep-alive comments arrive more often than the read timeout.
        let deadline = Instant::now() + GUARD;
        loop {
            assert!(Instant::now() < deadline, "hang guard waiting for {method}");
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("hang guard waiting for {method}: {e}"));
            assert!(n > 0, "the stream ended before {method}");
            let Some(data) = line.trim().strip_prefix("data:") else {
                continue;
            };
            if let Ok(m) = serde_json::from_str::<Value>(data.trim()) {
                if m["method"] == method {
                    return m;
                }
            }
        }
    }
}
