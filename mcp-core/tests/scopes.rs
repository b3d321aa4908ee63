//! Scopes without HTTP: over stdio the caller's `AuthInfo` comes from the
//! environment through `StdioOptions` (or from an interceptor), and the same
//! scope declarations refuse calls with a `-32003` JSON-RPC error and hide
//! what the caller may not use.

use mcp_core::intercept::{Hook, Interceptor, Next, Request};
use mcp_core::{
    context::AuthInfo, mcp_prompt, mcp_resource, mcp_tool, transport::stdio::serve_io,
    InvokeContext, McpServer, StdioOptions,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

mod common;

/// Reads a file.
#[mcp_tool(scopes = ["files:read"])]
async fn read(path: String) -> String {
    format!("contents of {path}")
}

/// Deletes a file.
#[mcp_tool(scopes = ["files:write", "files:read"])]
async fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Who is calling.
#[mcp_tool]
async fn whoami(ctx: InvokeContext) -> String {
    ctx.extensions()
        .get::<AuthInfo>()
        .map(|a| a.principal().to_owned())
        .unwrap_or_else(|| "nobody".to_owned())
}

/// The audit log.
#[mcp_resource(uri = "audit://log", scopes = ["audit:read"])]
async fn audit() -> String {
    "everything that happened".to_owned()
}

/// An administrator's prompt.
#[mcp_prompt(scopes = ["admin"])]
async fn admin() -> String {
    "You assist the administrator.".to_owned()
}

fn server() -> McpServer {
    McpServer::builder()
        .server_info("scopes-test", "1.0.0")
        .tool(read::tool())
        .tool(delete::tool())
        .tool(whoami::tool())
        .resource(audit::resource())
        .prompt(admin::prompt())
        .build()
        .expect("server")
}

struct Pipe {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
}

impl Pipe {
    fn open(server: McpServer, options: StdioOptions) -> Self {
        let (client_w, server_r) = tokio::io::duplex(1 << 16);
        let (server_w, client_r) = tokio::io::duplex(1 << 16);
        let _handle = serve_io(server, server_r, server_w, options);
        Self {
            write: client_w,
            lines: BufReader::new(client_r).lines(),
        }
    }

    async fn ask(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
            .into_bytes();
        line.push(b'\n');
        self.write.write_all(&line).await.expect("server reads");
        let line = common::guard("a reply", self.lines.next_line())
            .await
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }
}

fn names(reply: &Value, key: &str, field: &str) -> Vec<String> {
    reply["result"][key]
        .as_array()
        .expect("a listing")
        .iter()
        .map(|t| t[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What a stdio server started as `MCP_SCOPES="files:read" server` does.
fn from_environment(user: &str, scopes: &str) -> StdioOptions {
    let who = AuthInfo::new(user).with_scopes(scopes.split_whitespace());
    StdioOptions::default().principal(user).extension(who)
}

#[tokio::test]
async fn stdio_enforces_scopes_from_the_options() {
    let mut pipe = Pipe::open(server(), from_environment("alice", "files:read"));
    let ok = pipe
        .ask(
            1,
            "tools/call",
            json!({"name": "read", "arguments": {"path": "a"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "contents of a", "{ok}");
    let who = pipe
        .ask(2, "tools/call", json!({"name": "whoami", "arguments": {}}))
        .await;
    assert_eq!(who["result"]["content"][0]["text"], "alice", "{who}");

    let refused = pipe
        .ask(
            3,
            "tools/call",
            json!({"name": "delete", "arguments": {"path": "a"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    assert_eq!(
        refused["error"]["data"]["scopes"],
        json!(["files:write", "files:read"])
    );
    assert_eq!(
        refused["error"]["message"],
        "Insufficient scope: tool `delete` needs the scopes files:write files:read"
    );
    let resource = pipe
        .ask(4, "resources/read", json!({"uri": "audit://log"}))
        .await;
    assert_eq!(resource["error"]["code"], -32003, "{resource}");
    let prompt = pipe.ask(5, "prompts/get", json!({"name": "admin"})).await;
    assert_eq!(prompt["error"]["code"], -32003, "{prompt}");

    let tools = pipe.ask(6, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["read", "whoami"]);
    let resources = pipe.ask(7, "resources/list", json!({})).await;
    assert!(
        names(&resources, "resources", "uri").is_empty(),
        "{resources}"
    );
    let prompts = pipe.ask(8, "prompts/list", json!({})).await;
    assert!(names(&prompts, "prompts", "name").is_empty(), "{prompts}");
}

#[tokio::test]
async fn a_caller_without_auth_info_lacks_every_scope() {
    let mut pipe = Pipe::open(server(), StdioOptions::default());
    let refused = pipe
        .ask(
            1,
            "tools/call",
            json!({"name": "read", "arguments": {"path": "a"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    let open = pipe
        .ask(2, "tools/call", json!({"name": "whoami", "arguments": {}}))
        .await;
    assert_eq!(open["result"]["content"][0]["text"], "nobody");
    let tools = pipe.ask(3, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["whoami"]);
}

#[tokio::test]
async fn full_grants_see_and_use_everything() {
    let grants = "files:read files:write audit:read admin";
    let mut pipe = Pipe::open(server(), from_environment("root", grants));
    let ok = pipe
        .ask(
            1,
            "tools/call",
            json!({"name": "delete", "arguments": {"path": "a"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "deleted a", "{ok}");
    let log = pipe
        .ask(2, "resources/read", json!({"uri": "audit://log"}))
        .await;
    assert_eq!(
        log["result"]["contents"][0]["text"], "everything that happened",
        "{log}"
    );
    let tools = pipe.ask(3, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["read", "delete", "whoami"]);
    let prompts = pipe.ask(4, "prompts/list", json!({})).await;
    assert_eq!(names(&prompts, "prompts", "name"), ["admin"]);
}

/// Grants scopes from a header of the stdio options (a per-connection
/// credential), as an interceptor.
struct FromHeader;

impl Interceptor for FromHeader {
    fn intercept<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let scopes = req
            .headers()
            .get("x-scopes")
            .and_then(|v| v.as_single())
            .unwrap_or_default()
            .to_owned();
        req.extensions_mut()
            .insert(AuthInfo::new("svc").with_scopes(scopes.split(',')));
        next.pass(req)
    }
}

#[tokio::test]
async fn an_interceptor_can_attach_the_grants() {
    let server = McpServer::builder()
        .server_info("scopes-test", "1.0.0")
        .tool(read::tool())
        .tool(delete::tool())
        .interceptor(FromHeader)
        .build()
        .expect("server");
    let mut headers = mcp_core::context::Headers::new();
    headers.insert(
        "x-scopes".into(),
        mcp_core::context::HeaderValue::One("files:read".into()),
    );
    let mut pipe = Pipe::open(server, StdioOptions::default().headers(headers));
    let tools = pipe.ask(1, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["read"]);
    let ok = pipe
        .ask(
            2,
            "tools/call",
            json!({"name": "read", "arguments": {"path": "b"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "contents of b", "{ok}");
    let refused = pipe
        .ask(
            3,
            "tools/call",
            json!({"name": "delete", "arguments": {"path": "b"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
}
