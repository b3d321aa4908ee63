//! Transport-free tests of the dispatcher (`McpServer::handle_message`):
//! resources and prompts.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/dispatcher_prelude.rs");

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

fn resource_server() -> McpServer {
    build(
        McpServer::builder()
            .resource(
                text_resource("demo://text", "Text", "hello")
                    .with_mime_type("text/plain")
                    .with_description("Some text")
                    .with_title("The text"),
            )
            .resource(
                McpResourceDef::new(
                    "demo://blob",
                    "Blob",
                    |_r: ResourceRequest, _c: InvokeContext| async { vec![0u8, 1, 2, 255] },
                )
                .with_mime_type("application/octet-stream"),
            )
            .resource(McpResourceDef::new(
                "demo://explicit",
                "Explicit",
                |_r: ResourceRequest, _c: InvokeContext| async {
                    ResourceContents::text("demo://elsewhere", "# md")
                        .with_mime_type("text/markdown")
                },
            ))
            .resource(text_resource("demo://plain", "No mime", "plain"))
            .resource(text_resource(
                "file:///logs/special.txt",
                "Special log",
                "fixed wins",
            ))
            .resource(
                McpResourceDef::template(
                    "file:///logs/{date}.txt",
                    "Logs",
                    |r: ResourceRequest, _c: InvokeContext| async move {
                        format!("log of {} at {}", r.vars["date"], r.uri)
                    },
                )
                .with_mime_type("text/plain")
                .with_description("Daily logs"),
            )
            .resource(McpResourceDef::template(
                "repo://{owner}/{+path}",
                "Repo file",
                |r: ResourceRequest, _c: InvokeContext| async move {
                    format!("{}|{}", r.vars["owner"], r.vars["path"])
                },
            ))
            .resource(McpResourceDef::new(
                "demo://gone",
                "Gone",
                |_r: ResourceRequest, _c: InvokeContext| async {
                    Err::<String, ErrorObject>(ErrorObject::new(-32002, "Resource is gone"))
                },
            )),
    )
}

async fn read(server: &McpServer, uri: &str) -> Value {
    let reply = ask(
        server,
        &CallContext::new(),
        req(1, "resources/read", json!({"uri": uri})),
    )
    .await;
    result(&reply)["contents"].clone()
}

#[tokio::test]
async fn resources_list_returns_fixed_resources() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/list", json!({})),
    )
    .await;
    let list = result(&reply)["resources"]
        .as_array()
        .expect("resources")
        .clone();
    let uris: Vec<&str> = list
        .iter()
        .map(|r| r["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "demo://text",
            "demo://blob",
            "demo://explicit",
            "demo://plain",
            "file:///logs/special.txt",
            "demo://gone"
        ]
    );
    assert_eq!(
        list[0],
        json!({
            "uri": "demo://text",
            "name": "Text",
            "title": "The text",
            "description": "Some text",
            "mimeType": "text/plain",
        })
    );
    assert!(list[3].get("mimeType").is_none());
}

#[tokio::test]
async fn resources_templates_list_returns_templates() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/templates/list", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["resourceTemplates"],
        json!([
            {
                "uriTemplate": "file:///logs/{date}.txt",
                "name": "Logs",
                "description": "Daily logs",
                "mimeType": "text/plain",
            },
            {"uriTemplate": "repo://{owner}/{+path}", "name": "Repo file"},
        ])
    );
}

#[tokio::test]
async fn resources_read_text_defaults_uri_and_mime_type() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://text").await,
        json!([{"uri": "demo://text", "mimeType": "text/plain", "text": "hello"}])
    );
    assert_eq!(
        read(&server, "demo://plain").await,
        json!([{"uri": "demo://plain", "text": "plain"}])
    );
}

#[tokio::test]
async fn resources_read_blob_is_base64() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://blob").await,
        json!([{"uri": "demo://blob", "mimeType": "application/octet-stream", "blob": "AAEC/w=="}])
    );
}

#[tokio::test]
async fn resources_read_keeps_explicit_uri_and_mime_type() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://explicit").await,
        json!([{"uri": "demo://elsewhere", "mimeType": "text/markdown", "text": "# md"}])
    );
}

#[tokio::test]
async fn resources_read_matches_templates_with_vars() {
    let server = resource_server();
    assert_eq!(
        read(&server, "file:///logs/2026-01-02.txt").await,
        json!([{
            "uri": "file:///logs/2026-01-02.txt",
            "mimeType": "text/plain",
            "text": "log of 2026-01-02 at file:///logs/2026-01-02.txt",
        }])
    );
    assert_eq!(
        read(&server, "repo://me/src/lib%20x.rs").await,
        json!([{"uri": "repo://me/src/lib%20x.rs", "text": "me|src/lib x.rs"}])
    );
    // A fixed resource is preferred over a matching template.
    assert_eq!(
        read(&server, "file:///logs/special.txt").await[0]["text"],
        "fixed wins"
    );
    // A simple variable does not match across `/`.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/read", json!({"uri": "file:///logs/a/b.txt"})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "Unknown resource: file:///logs/a/b.txt".to_owned())
    );
}

#[tokio::test]
async fn resources_read_template_value_may_contain_the_following_literal() {
    // `file:///logs/{date}.txt` expands date = "v1.txt" to
    // `file:///logs/v1.txt.txt` ("." is unreserved, so nothing is encoded);
    // reading that URI must match the template back.
    let server = resource_server();
    let contents = read(&server, "file:///logs/v1.txt.txt").await;
    assert_eq!(
        contents[0]["text"],
        "log of v1.txt at file:///logs/v1.txt.txt"
    );
}

#[tokio::test]
async fn resources_read_handler_error_is_the_reply() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(3, "resources/read", json!({"uri": "demo://gone"})),
    )
    .await;
    assert_eq!(reply["id"], 3);
    assert_eq!(error(&reply), (-32002, "Resource is gone".to_owned()));
}

#[tokio::test]
async fn resources_and_prompts_methods_not_found_without_registrations() {
    let server = build(McpServer::builder().tool(echo_tool()));
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    ] {
        let reply = ask(
            &server,
            &CallContext::new(),
            req(1, method, json!({"uri": "demo://x", "name": "x"})),
        )
        .await;
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}"))
        );
    }
    // Prompts only: resources are still absent, and vice versa.
    let prompts_only = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &prompts_only,
        &CallContext::new(),
        req(1, "resources/list", json!({})),
    )
    .await;
    assert_eq!(error(&reply).0, -32601);
    let resources_only = build(McpServer::builder().resource(text_resource("demo://a", "A", "a")));
    let reply = ask(
        &resources_only,
        &CallContext::new(),
        req(1, "prompts/list", json!({})),
    )
    .await;
    assert_eq!(error(&reply).0, -32601);
}

#[tokio::test]
async fn unknown_methods_are_not_found() {
    let server = resource_server();
    for method in [
        "tools/destroy",
        "",
        "resources/subscribe",
        "sampling/createMessage",
        "Ping",
    ] {
        let reply = ask(&server, &CallContext::new(), req("m", method, json!({}))).await;
        assert_eq!(reply["id"], "m");
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}"))
        );
    }
}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

#[tokio::test]
async fn prompts_list_and_get() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "prompts/list", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["prompts"],
        json!([{
            "name": "greet",
            "description": "A greeting template",
            "arguments": [
                {"name": "who", "description": "Name to greet", "required": true},
                {"name": "tone", "description": "How to greet", "required": false},
            ],
        }])
    );

    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            2,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "Ada", "tone": "warm"}}),
        ),
    )
    .await;
    assert_eq!(
        result(&reply),
        &json!({
            "description": "Greet Ada",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi Ada (warm)"}}],
        })
    );
    // Optional argument omitted.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            3,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "Bo"}}),
        ),
    )
    .await;
    assert_eq!(
        result(&reply)["messages"][0]["content"]["text"],
        "Hi Bo (plain)"
    );
}

#[tokio::test]
async fn prompts_get_enforces_required_arguments() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    for params in [
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {}}),
        json!({"name": "greet", "arguments": null}),
        json!({"name": "greet", "arguments": {"tone": "warm"}}),
    ] {
        let reply = ask(
            &server,
            &CallContext::new(),
            req(1, "prompts/get", params.clone()),
        )
        .await;
        let (code, message) = error(&reply);
        assert_eq!(code, -32602, "for {params}");
        assert!(
            message.contains("`who`"),
            "message names the argument: {message}"
        );
        assert_eq!(message, "Missing required argument `who` for prompt greet");
    }
}

#[tokio::test]
async fn prompts_get_rejects_non_string_arguments() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            1,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": 5}}),
        ),
    )
    .await;
    assert_eq!(
        error(&reply),
        (
            -32602,
            "prompts/get argument `who` must be a string".to_owned()
        )
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            1,
            "prompts/get",
            json!({"name": "greet", "arguments": ["Ada"]}),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32602);
}

#[tokio::test]
async fn prompts_get_handler_error_is_the_reply() {
    let server = build(McpServer::builder().prompt(McpPromptDef::new(
        "broken",
        |_a: PromptArgs, _c: InvokeContext| async {
            Err::<String, ErrorObject>(ErrorObject::invalid_params("no such template variant"))
        },
    )));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "prompts/get", json!({"name": "broken"})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "no such template variant".to_owned())
    );
}
