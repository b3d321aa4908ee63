//! `ProxyOptions::transforms`: a backend's tools adapted behind the proxy
//! (renamed, hidden, an argument defaulted, fixed and renamed), the
//! backend receiving the arguments its tool was written for, a caller
//! never able to set a fixed argument, and the transforms applied again
//! when the backend's listing changes: a problem reported by
//! `Remote::transform_problems`, never two tools served under one name;
//! a mount's own transforms of proxied tools refused.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::client::proxy::{ProxyOptions, Remote, Target, DEFAULT_LISTING_TTL};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_core::handler::{ToolTransforms, TransformProblem};
use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Request};
use mcp_core::protocol::CallToolResult;
use mcp_core::{serve_http, HttpOptions, InvokeContext, McpServer, McpToolDef};
use serde_json::{json, Map, Value};

mod client_support;
use client_support::{guard, text};

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

type Calls = Arc<Mutex<Vec<String>>>;

/// A backend tool that answers with its name and the arguments it got,
/// and records them.
fn recording(name: &'static str, schema: Value, calls: &Calls) -> McpToolDef {
    let calls = Arc::clone(calls);
    McpToolDef::new(
        name,
        "a backend tool",
        schema,
        move |args: Map<String, Value>, _ctx: InvokeContext| {
            let line = format!("{name} {}", Value::Object(args));
            calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(line.clone());
            async move { CallToolResult::text(line) }
        },
    )
}

fn search_schema() -> Value {
    json!({"type": "object", "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "repo": {"type": "string"}
    }, "required": ["query", "limit", "repo"]})
}

fn transforms() -> ToolTransforms {
    ToolTransforms::new()
        .rename("search", "find")
        .hide("secret")
        .describe("search", "Finds pages")
        .default("search", "limit", json!(10))
        .fix("search", "repo", json!("acme/site"))
        .rename_arg("search", "query", "q")
}

fn names(server: &McpServer) -> Vec<String> {
    let mut names: Vec<String> = server.list_tools().into_iter().map(|t| t.name).collect();
    names.sort_unstable();
    names
}

async fn until(what: &str, done: impl Fn() -> bool) {
    guard(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_proxied_backend_is_served_transformed_and_kept_so_on_refresh() {
    for era in ERAS {
        let calls = Calls::default();
        let backend_server = McpServer::builder()
            .server_info("backend", "1")
            .live_tools()
            .tool(recording("search", search_schema(), &calls))
            .tool(recording("echo", json!({"type": "object"}), &calls))
            .tool(recording("secret", json!({"type": "object"}), &calls))
            .build()
            .expect("backend");
        let backend = serve_http(backend_server.clone(), HttpOptions::new().port(0))
            .await
            .expect("backend serves");
        let remote = Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0").protocol(Protocol::pinned(era)),
            ProxyOptions::new().transforms(transforms()),
        )
        .await
        .expect("remote");
        let front = McpServer::builder()
            .live_tools()
            .mount("remote", remote.builder().await.expect("listing"))
            .build()
            .expect("front");
        let sync = remote.sync_tools(front.clone(), Some("remote".into()), DEFAULT_LISTING_TTL);

        assert_eq!(names(&front), ["remote_echo", "remote_find"], "{era}");
        assert_eq!(remote.transform_problems(), [], "{era}");
        let find = front
            .list_tools()
            .into_iter()
            .find(|t| t.name == "remote_find")
            .expect("listed");
        assert_eq!(find.description.as_deref(), Some("Finds pages"));
        assert_eq!(find.input_schema["required"], json!(["q"]), "{era}");
        assert!(find.input_schema["properties"].get("repo").is_none());

        let r = front
            .call_tool("remote_find", json!({"q": "rust"}))
            .await
            .expect("forwarded");
        assert_eq!(
            text(&r),
            r#"search {"limit":10,"query":"rust","repo":"acme/site"}"#,
            "{era}: the backend gets its own argument names, the default and the fixed value"
        );
        let r = front
            .call_tool("remote_find", json!({"q": "rust", "repo": "evil/other"}))
            .await
            .expect("a tool error");
        assert!(r.is_error() && text(&r).contains("`repo`"), "{}", text(&r));
        assert!(
            !calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|c| c.contains("evil")),
            "{era}: the backend never saw the caller's value for the fixed argument"
        );
        let hidden = front
            .call_tool("remote_secret", json!({}))
            .await
            .expect_err("hidden");
        let never = front
            .call_tool("remote_nothing", json!({}))
            .await
            .expect_err("unknown");
        assert_eq!(hidden.code, never.code, "{era}");

        // The backend drops `secret` and lists a `find` of its own: the
        // rename of `search` onto `find` is undone (one tool per name), and
        // both problems are reported.
        tokio::time::sleep(Duration::from_millis(200)).await;
        backend_server.remove_tool("secret").await;
        backend_server
            .add_tool(recording("find", json!({"type": "object"}), &calls))
            .await
            .expect("added");
        until("the refresh", || {
            names(&front) == ["remote_echo", "remote_find", "remote_search"]
        })
        .await;
        let problems = remote.transform_problems();
        assert!(
            problems.contains(&TransformProblem::UnknownTool("secret".into())),
            "{era}: {problems:?}"
        );
        assert!(
            problems.contains(&TransformProblem::NameTaken {
                tool: "search".into(),
                argument: None,
                name: "find".into()
            }),
            "{era}: {problems:?}"
        );
        let r = front
            .call_tool("remote_find", json!({}))
            .await
            .expect("forwarded");
        assert_eq!(text(&r), "find {}", "{era}: the backend's own `find`");
        let r = front
            .call_tool("remote_search", json!({"q": "x"}))
            .await
            .expect("forwarded");
        assert_eq!(
            text(&r),
            r#"search {"limit":10,"query":"x","repo":"acme/site"}"#,
            "{era}: its argument transforms still apply under its own name"
        );

        #[cfg(feature = "catalog")]
        {
            use mcp_core::catalog::{lock, Catalog, DEFAULT_REVISIONS};
            let catalog = Catalog::of_server(&front, DEFAULT_REVISIONS)
                .await
                .expect("catalog");
            let text = lock::render(&catalog);
            assert!(text.contains("\"remote_find\""), "{text}");
            assert!(!text.contains("remote_secret"), "{text}");
            assert!(!text.contains("\"repo\""), "the fixed argument: {text}");
        }
        sync.abort();
        drop((remote, front));
        backend.close().await;
    }
}

/// A backend tool whose argument transforms no longer fit (its fixed
/// argument changed type) is not served at all: its argument is never
/// open to callers.
#[tokio::test]
async fn a_tool_whose_fixed_argument_no_longer_fits_is_withheld() {
    let calls = Calls::default();
    let backend_server = McpServer::builder()
        .server_info("backend", "1")
        .tool(recording(
            "search",
            json!({"type": "object", "properties": {
                "query": {"type": "string"}, "limit": {"type": "integer"},
                "repo": {"type": "integer"}
            }}),
            &calls,
        ))
        .tool(recording("echo", json!({"type": "object"}), &calls))
        .build()
        .expect("backend");
    let backend = serve_http(backend_server, HttpOptions::new().port(0))
        .await
        .expect("backend serves");
    let remote = Remote::connect(
        "backend",
        Target::Url(backend.url().to_owned()),
        ClientBuilder::new("proxy", "0"),
        ProxyOptions::new().transforms(transforms()),
    )
    .await
    .expect("remote");
    let front = McpServer::builder()
        .mount("remote", remote.builder().await.expect("listing"))
        .build()
        .expect("front");
    assert_eq!(names(&front), ["remote_echo"]);
    let problems = remote.transform_problems();
    assert!(
        problems.iter().any(|p| matches!(p,
            TransformProblem::BadValue { tool, argument, .. } if tool == "search" && argument == "repo")),
        "{problems:?}"
    );
    backend.close().await;
}

/// The attack: transforms given to `mount_with` for a proxied backend's
/// tools were applied once, and the backend's refreshes (which know only
/// `ProxyOptions::transforms`) served the hidden tool and the tool with
/// its fixed argument open again. Such a mount does not build; the same
/// transforms given to the proxy hold across refreshes.
#[tokio::test]
async fn a_mounts_transforms_of_proxied_tools_are_refused() {
    let calls = Calls::default();
    let listed = Arc::new(AtomicUsize::new(0));
    let backend_server = McpServer::builder()
        .server_info("backend", "1")
        .tool(recording("search", search_schema(), &calls))
        .tool(recording("secret", json!({"type": "object"}), &calls))
        .interceptor(CountLists(Arc::clone(&listed)))
        .build()
        .expect("backend");
    let backend = serve_http(backend_server, HttpOptions::new().port(0))
        .await
        .expect("backend serves");
    let connect = |options: ProxyOptions| {
        Remote::connect(
            "backend",
            Target::Url(backend.url().to_owned()),
            ClientBuilder::new("proxy", "0"),
            options,
        )
    };
    let remote = connect(ProxyOptions::new()).await.expect("remote");
    let e = McpServer::builder()
        .live_tools()
        .mount_with("db", remote.builder().await.expect("listing"), transforms())
        .build()
        .err();
    let Some(mcp_core::BuildError::MountTransform { problems, .. }) = e else {
        panic!("built: {e:?}");
    };
    assert_eq!(
        problems,
        [
            TransformProblem::Proxied("search".into()),
            TransformProblem::Proxied("secret".into())
        ]
    );

    // Given to the proxy, they survive a refresh.
    let remote = connect(ProxyOptions::new().transforms(transforms()))
        .await
        .expect("remote");
    let front = McpServer::builder()
        .live_tools()
        .mount("db", remote.builder().await.expect("listing"))
        .build()
        .expect("front");
    let listed_once = listed.load(Ordering::SeqCst);
    let sync = remote.sync_tools(front.clone(), Some("db".into()), Duration::from_millis(20));
    // Two refreshes, seen by the backend: the hidden tool stays hidden.
    until("two refreshes", || {
        listed.load(Ordering::SeqCst) >= listed_once + 2
    })
    .await;
    assert_eq!(names(&front), ["db_find"]);
    let r = front
        .call_tool("db_find", json!({"q": "x", "repo": "evil/other"}))
        .await
        .expect("a tool error");
    assert!(
        r.is_error() && text(&r).contains("`repo`"),
        "the fixed argument stays closed: {}",
        text(&r)
    );
    sync.abort();
    backend.close().await;
}

/// Counts the `tools/list` requests a backend answers.
struct CountLists(Arc<AtomicUsize>);

impl Interceptor for CountLists {
    fn operations(&self) -> Operations {
        Operations::only(Operation::ListTools)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        next.pass(req)
    }
}
