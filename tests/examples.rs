//! The example servers (`examples/`) as real processes over real pipes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use mcp_suite::{spawn_example, spawn_example_with};
use serde_json::{json, Value};
use tokio::process::Child;
use tokio::time::timeout;

/// Hang guard for anything that should happen promptly.
const GUARD: Duration = Duration::from_secs(20);

async fn connect(name: &str) -> (TestClient, Child) {
    connect_with(name, ClientOptions::default()).await
}

async fn connect_with(name: &str, options: ClientOptions) -> (TestClient, Child) {
    // Spawning may first build the examples (outside the hang guard).
    let (mut client, child) = spawn_example_with(name, options)
        .unwrap_or_else(|e| panic!("example `{name}` should start: {e}"));
    timeout(GUARD, client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .unwrap_or_else(|_| panic!("example `{name}` should initialize before the hang guard"))
        .unwrap_or_else(|e| panic!("example `{name}` should initialize: {e:?}"));
    (client, child)
}

fn assert_running(child: &mut Child) {
    let status = child.try_wait().expect("querying the child process");
    assert!(status.is_none(), "the server process exited: {status:?}");
}

// ---------------------------------------------------------------------------
// hello
// ---------------------------------------------------------------------------

#[tokio::test]
async fn hello_echoes() {
    let (client, _child) = connect("hello").await;
    let init = client.initialize_result().expect("initialized");
    assert_eq!(init["serverInfo"]["name"], "hello");
    assert_eq!(init["protocolVersion"], LATEST_PROTOCOL_VERSION);

    let result = client
        .call_tool("echo", json!({"text": "hi over a pipe"}))
        .await
        .expect("echo");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "hi over a pipe");

    let result = client
        .call_tool("echo", json!({}))
        .await
        .expect("echo without text is a tool error, not a protocol error");
    assert!(result.is_error(), "result: {result:?}");
}

#[tokio::test]
async fn server_discover_probes_are_answered_and_the_server_keeps_running() {
    let (mut client, mut child) = spawn_example("hello").expect("spawn hello");
    // A dual-era client probes with the stateless revision's _meta first.
    let meta = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    let discovered = client
        .request("server/discover", meta)
        .await
        .expect("a modern probe gets a DiscoverResult");
    assert_eq!(discovered["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(discovered["resultType"], "complete");
    // A probe without the _meta is a modern request missing its metadata.
    let err = client
        .request("server/discover", json!({}))
        .await
        .expect_err("a bare probe is refused");
    assert_eq!(err.code, -32602, "error: {err:?}");
    assert_running(&mut child);

    // A legacy client's handshake works on the same process.
    let init = client
        .initialize(LATEST_PROTOCOL_VERSION)
        .await
        .expect("initialize after the probe");
    assert_eq!(init["serverInfo"]["name"], "hello");
    let result = client
        .call_tool("echo", json!({"text": "after probe"}))
        .await
        .expect("echo after the probe");
    assert_eq!(result.text_content(), "after probe");
    assert_running(&mut child);
}

#[tokio::test]
async fn closing_stdin_makes_the_process_exit_successfully() {
    let (client, mut child) = connect("hello").await;
    let result = client
        .call_tool("echo", json!({"text": "bye"}))
        .await
        .expect("echo");
    assert_eq!(result.text_content(), "bye");

    client.close().await.expect("closing the client");
    let status = timeout(GUARD, child.wait())
        .await
        .expect("the server should exit once its stdin is closed")
        .expect("waiting for the child");
    assert!(status.success(), "exit status: {status}");
}

// ---------------------------------------------------------------------------
// demo
// ---------------------------------------------------------------------------

#[tokio::test]
async fn demo_echoes() {
    let (client, _child) = connect("demo").await;
    let init = client.initialize_result().expect("initialized");
    assert_eq!(init["serverInfo"]["name"], "demo");
    let result = client
        .call_tool("echo", json!({"text": "demo echo"}))
        .await
        .expect("echo");
    assert_eq!(result.text_content(), "demo echo");
}

/// `big` with 300 KiB: over the default limit (100 KiB), the result is cut
/// at a line with a note and a `resource_link`, and the pages read back
/// through `resources/read` make the whole result.
#[tokio::test]
async fn demo_big_is_cut_and_read_back_in_pages() {
    let (client, _child) = connect("demo").await;
    let result = timeout(GUARD, client.call_tool("big", json!({"kb": 300})))
        .await
        .expect("big before the hang guard")
        .expect("big");
    let blocks = serde_json::to_value(&result.content).expect("json");
    assert_eq!(
        blocks.as_array().map(Vec::len),
        Some(3),
        "{:.300}",
        blocks.to_string()
    );
    let kept = blocks[0]["text"].as_str().expect("the cut text");
    assert!(
        kept.len() < 100 * 1024 && kept.len() > 90 * 1024,
        "{}",
        kept.len()
    );
    assert!(kept.ends_with('\n'), "cut inside a line");
    let note = blocks[1]["text"].as_str().expect("the note");
    assert!(note.contains("Result cut"), "{note}");
    assert_eq!(blocks[2]["type"], "resource_link");
    let mut next = blocks[2]["uri"].as_str().map(str::to_owned);
    let mut whole = String::new();
    while let Some(uri) = next.take() {
        let page = timeout(GUARD, client.request("resources/read", json!({"uri": uri})))
            .await
            .expect("a page before the hang guard")
            .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        let contents = &page["contents"][0];
        whole.push_str(contents["text"].as_str().expect("page text"));
        next = contents["_meta"]["nextUri"].as_str().map(str::to_owned);
    }
    let full: Value = serde_json::from_str(&whole).expect("the pages make the result's JSON");
    let text = full["content"][0]["text"].as_str().expect("the whole text");
    assert_eq!(text.len(), 300 * 1024);
    assert!(text.starts_with(kept));
}

#[tokio::test]
async fn demo_slow_reports_strictly_increasing_progress() {
    let (client, _child) = connect("demo").await;
    let (result, progress) = client
        .call_tool_with_progress("slow", json!({"steps": 3, "delay_ms": 10}))
        .await
        .expect("slow");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "done after 3 steps");
    assert_eq!(progress.len(), 3, "progress: {progress:?}");
    mcp_suite::assert_progress_counts_up(&progress, 3.0);
}

#[tokio::test]
async fn demo_slow_is_cancelled() {
    let (client, mut child) = connect("demo").await;
    let pending = client
        .start_request(
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 100, "delay_ms": 50},
                   "_meta": {"progressToken": "cancel-me"}}),
        )
        .await;
    // The first progress report proves the call is running.
    let first = client
        .next_notification(GUARD)
        .await
        .expect("a progress notification while slow runs");
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "cancel-me");

    assert!(client.cancel(&pending.id).await);
    assert!(
        pending.response(Duration::from_secs(1)).await.is_none(),
        "a cancelled call gets no response"
    );
    // Reports already queued may still arrive; after that, silence. Were the
    // call still running it would report every 50 ms.
    let _ = client.drain_notifications().await;
    let late = client.next_notification(Duration::from_millis(700)).await;
    assert!(
        late.is_none(),
        "progress continued after cancellation: {late:?}"
    );

    let result = client
        .call_tool("echo", json!({"text": "still serving"}))
        .await
        .expect("echo after cancellation");
    assert_eq!(result.text_content(), "still serving");
    assert_running(&mut child);
}

#[tokio::test]
async fn demo_confirm_via_elicitation() {
    let (client, _child) = connect("demo").await;
    let result = client
        .call_tool("confirm", json!({"message": "Ship it?"}))
        .await
        .expect("confirm");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "confirmed");
}

/// A client that cannot be asked has not consented: the demo answers "not
/// confirmed" and says why (the client lacks elicitation), so the caller
/// can tell it from a user who said no.
#[tokio::test]
async fn demo_confirm_without_elicitation_fails_closed() {
    let (client, _child) =
        connect_with("demo", ClientOptions::default().without_elicitation()).await;
    let result = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm");
    assert!(result.is_error(), "result: {result:?}");
    assert_eq!(
        result.text_content(),
        "not confirmed: cannot ask (the client does not support elicitation)"
    );
}

// ---------------------------------------------------------------------------
// calendar
// ---------------------------------------------------------------------------

#[tokio::test]
async fn calendar_lists_create_event_with_an_output_schema() {
    let (client, _child) = connect("calendar").await;
    let list = client
        .request("tools/list", json!({}))
        .await
        .expect("tools/list");
    let tools = list["tools"].as_array().expect("a tools array");
    let create = tools
        .iter()
        .find(|t| t["name"] == "create_event")
        .unwrap_or_else(|| panic!("create_event is listed: {list}"));
    let schema = &create["outputSchema"];
    assert_eq!(schema["type"], "object", "tool: {create}");
    assert!(
        schema["properties"]["id"].is_object(),
        "outputSchema describes id: {schema}"
    );
    assert_eq!(create["inputSchema"]["required"], json!(["title"]));
}

#[tokio::test]
async fn calendar_create_event_returns_structured_content() {
    let (client, _child) = connect("calendar").await;
    let result = client
        .call_tool(
            "create_event",
            json!({"title": "Retro", "startsAt": "2026-09-11T10:00:00Z"}),
        )
        .await
        .expect("create_event");
    assert!(!result.is_error(), "result: {result:?}");
    let structured = Value::Object(result.structured_content.expect("structuredContent"));
    assert_eq!(
        structured,
        json!({"id": "e3", "title": "Retro", "startsAt": "2026-09-11T10:00:00Z"})
    );
}

#[tokio::test]
async fn calendar_week_resource_is_json() {
    let (client, _child) = connect("calendar").await;
    let read = client
        .request("resources/read", json!({"uri": "calendar://week"}))
        .await
        .expect("resources/read");
    let contents = read["contents"].as_array().expect("a contents array");
    assert_eq!(contents.len(), 1, "read: {read}");
    assert_eq!(contents[0]["uri"], "calendar://week");
    assert_eq!(contents[0]["mimeType"], "application/json");
    let events: Value = serde_json::from_str(contents[0]["text"].as_str().expect("text contents"))
        .expect("the week is JSON");
    let ids: Vec<&str> = events
        .as_array()
        .expect("an array of events")
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(ids, ["e1", "e2"]);
}

#[tokio::test]
async fn calendar_prepare_week_prompt_uses_the_focus() {
    let (client, _child) = connect("calendar").await;
    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "prepare_week", "arguments": {"focus": "deep work"}}),
        )
        .await
        .expect("prompts/get");
    let messages = prompt["messages"].as_array().expect("a messages array");
    assert!(!messages.is_empty(), "prompt: {prompt}");
    let text = messages[0]["content"]["text"]
        .as_str()
        .expect("text message");
    assert!(text.contains("Focus: deep work."), "text: {text:?}");
}

#[tokio::test]
async fn calendar_asks_for_a_missing_start_time() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let options = ClientOptions::default().elicit(move |params| {
        record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(params.clone());
        Ok(json!({"action": "accept", "content": {"startsAt": "2026-09-10T08:30:00Z"}}))
    });
    let (client, _child) = connect_with("calendar", options).await;

    let result = client
        .call_tool("create_event", json!({"title": "Breakfast"}))
        .await
        .expect("create_event");
    assert!(!result.is_error(), "result: {result:?}");
    let structured = Value::Object(result.structured_content.expect("structuredContent"));
    assert_eq!(
        structured,
        json!({"id": "e3", "title": "Breakfast", "startsAt": "2026-09-10T08:30:00Z"})
    );

    {
        let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(seen.len(), 1, "one elicitation: {seen:?}");
        assert!(
            seen[0]["requestedSchema"]["properties"]["startsAt"].is_object(),
            "the form asks for startsAt: {}",
            seen[0]
        );
    }

    // The event is in the calendar at the elicited time.
    let read = client
        .request("resources/read", json!({"uri": "calendar://week"}))
        .await
        .expect("resources/read");
    let events: Value =
        serde_json::from_str(read["contents"][0]["text"].as_str().expect("text contents"))
            .expect("the week is JSON");
    let created = events
        .as_array()
        .expect("an array of events")
        .iter()
        .find(|e| e["id"] == "e3")
        .unwrap_or_else(|| panic!("e3 is in the week: {events}"));
    assert_eq!(created["startsAt"], "2026-09-10T08:30:00Z");
}

#[tokio::test]
async fn calendar_without_start_time_or_elicitation_is_a_tool_error() {
    let (client, _child) =
        connect_with("calendar", ClientOptions::default().without_elicitation()).await;
    let result = client
        .call_tool("create_event", json!({"title": "Breakfast"}))
        .await
        .expect("create_event");
    assert!(result.is_error(), "result: {result:?}");
    assert!(
        result.structured_content.is_none(),
        "nothing created: {result:?}"
    );
}

// ---------------------------------------------------------------------------
// apps
// ---------------------------------------------------------------------------

#[tokio::test]
async fn apps_lists_its_tools_and_serves_its_view() {
    let (client, _child) = connect("apps").await;
    let init = client.initialize_result().expect("initialized");
    assert!(
        init["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_object(),
        "the apps extension is declared: {init}"
    );

    let listed = client
        .request("tools/list", json!({}))
        .await
        .expect("tools/list");
    let tools = listed["tools"].as_array().expect("a tools array");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` listed: {listed}"))
    };
    assert_eq!(
        tool("chart")["_meta"]["ui"],
        json!({"resourceUri": "ui://apps/chart.html"})
    );
    // The app-only tool is listed (the host keeps it from the model).
    assert_eq!(
        tool("chart_summary")["_meta"]["ui"]["visibility"],
        json!(["app"])
    );

    let read = client
        .request("resources/read", json!({"uri": "ui://apps/chart.html"}))
        .await
        .expect("resources/read");
    let view = &read["contents"][0];
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        view["_meta"]["ui"]["csp"]["resourceDomains"],
        json!(["https://cdn.jsdelivr.net"])
    );
    assert_eq!(view["_meta"]["ui"]["prefersBorder"], true);
    let html = view["text"].as_str().expect("the view's HTML");
    assert!(
        html.contains("app.callServerTool"),
        "the view calls through the host"
    );
    assert!(html.contains("https://cdn.jsdelivr.net/npm/@modelcontextprotocol/ext-apps@"));

    let result = client
        .call_tool("chart", json!({"values": [3, 1, 4]}))
        .await
        .expect("chart");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "Charted 3 values from 1 to 4.");
    let summary = client
        .call_tool("chart_summary", json!({"values": [3, 1, 4]}))
        .await
        .expect("chart_summary");
    assert_eq!(
        summary.text_content(),
        "3 values: min 1, max 4, total 8, mean 2.67"
    );
    let empty = client
        .call_tool("chart", json!({"values": []}))
        .await
        .expect("an empty chart is a tool error");
    assert!(empty.is_error(), "result: {empty:?}");
}
