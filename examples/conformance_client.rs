//! The client the official conformance suite (`@modelcontextprotocol/conformance`,
//! its client scenarios) drives: one run per scenario, the
//! scenario server's URL as the last argument, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`, the revision to speak in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some scenarios, what to do
//! in `MCP_CONFORMANCE_CONTEXT` (JSON).
//!
//! ```sh
//! cargo build --example conformance_client --features client
//! npx @modelcontextprotocol/conformance client --command target/debug/examples/conformance_client \
//!   --expected-failures tests/conformance-client-baseline.yaml
//! ```
//!
//! It is also a small tour of `mcp_core::client`: connect, list, call,
//! answer the server's questions and, for the `auth/*` scenarios,
//! authorize with OAuth (`mcp_core::client::oauth`): the suite's
//! authorization servers approve without a user, so the redirect is read
//! straight from the authorization endpoint's answer.

use std::process::ExitCode;

use mcp_core::client::oauth::{HeadlessRedirect, IdentityProvider, OAuth, PreRegistered};
use mcp_core::client::{Client, ClientBuilder, ClientError, Handlers, Protocol};
use serde_json::{json, Map, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client <server URL>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Answers elicitation with every default the requested schema names,
/// sampling with a fixed text, and roots with one directory.
fn handlers() -> Handlers {
    Handlers::default()
        .elicitation(|request| async move {
            let mut content = Map::new();
            if let Some(Value::Object(props)) = request
                .get("requestedSchema")
                .and_then(|s| s.get("properties"))
            {
                for (name, schema) in props {
                    if let Some(default) = schema.get("default") {
                        content.insert(name.clone(), default.clone());
                    }
                }
            }
            Ok(json!({"action": "accept", "content": content}))
        })
        .sampling(|_request| async move {
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "sampled by the conformance client"},
                "model": "conformance-model",
                "stopReason": "endTurn",
            }))
        })
        .roots(vec![json!({"uri": "file:///tmp", "name": "tmp"})])
}

/// The client ID metadata document URL the suite's authorization servers
/// accept without fetching it.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Never listened on: the code is read from the authorization redirect.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// OAuth as the suite's scenarios want it: the context's pre-registered
/// credentials (bound to its issuer) when it names some, a client ID
/// metadata document where the authorization server supports them,
/// dynamic registration otherwise; the client credentials grant for the
/// extension scenarios that ask for them; DPoP where offered.
fn oauth(scenario: &str) -> OAuth {
    let mut oauth = OAuth::new(HeadlessRedirect::new(REDIRECT_URI))
        .client_name("mcp-core-conformance-client")
        .client_metadata_url(CLIENT_METADATA_URL)
        // DPoP-bound tokens where the authorization server offers them.
        .dpop(true);
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str::<Value>(&c).ok())
        .unwrap_or(Value::Null);
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(id) = text("client_id") {
        let mut credentials = PreRegistered::new(id);
        if let Some(secret) = text("client_secret") {
            credentials = credentials.secret(secret);
        }
        if let Some(issuer) = text("issuer") {
            credentials = credentials.issuer(issuer);
        }
        // The extensions for clients without a user: no redirect.
        if scenario == "auth/client-credentials-basic" {
            return OAuth::client_credentials(credentials);
        }
        if scenario == "auth/client-credentials-jwt" {
            let pem = text("private_key_pem").unwrap_or_default();
            return match credentials.clone().private_key_pem(&pem) {
                Ok(with_key) => OAuth::client_credentials(with_key),
                Err(e) => {
                    eprintln!("{scenario}: {e}");
                    OAuth::client_credentials(credentials)
                }
            };
        }
        if scenario == "auth/enterprise-managed-authorization" {
            let id_token = text("idp_id_token").unwrap_or_default();
            let idp = IdentityProvider::new(
                text("idp_token_endpoint").unwrap_or_default(),
                text("idp_client_id").unwrap_or_default(),
                move || Ok(id_token.clone()),
            );
            return OAuth::enterprise(credentials, idp);
        }
        if scenario == "auth/wif-jwt-bearer" {
            let assertion = text("valid_jwt").unwrap_or_default();
            return OAuth::jwt_bearer(credentials, move || Ok(assertion.clone()));
        }
        oauth = oauth.pre_registered(credentials);
    }
    oauth
}

async fn connect(url: &str, scenario: &str) -> Result<Client, ClientError> {
    let protocol = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(version) if !version.is_empty() => Protocol::pinned(&version),
        _ => Protocol::Auto,
    };
    let mut builder = ClientBuilder::new("mcp-core-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol(protocol)
        .handlers(handlers());
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(scenario));
    }
    builder.connect_http(url).await
}

async fn run(scenario: &str, url: &str) -> Result<(), ClientError> {
    let client = connect(url, scenario).await?;
    let outcome = drive(&client, scenario).await;
    client.close().await;
    outcome
}

async fn drive(client: &Client, scenario: &str) -> Result<(), ClientError> {
    match scenario {
        "tools_call" => {
            client.list_tools().await?;
            client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await
                .map(drop)
        }
        "elicitation-sep1034-client-defaults" => client
            .call_tool("test_client_elicitation_defaults", ())
            .await
            .map(drop),
        "sse-retry" => client.call_tool("test_reconnection", ()).await.map(drop),
        "http-custom-headers" => {
            client.list_tools().await?;
            for call in context_tool_calls() {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
                client.call_tool(name, arguments).await?;
            }
            Ok(())
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let Some(tool) = tools.iter().find(|t| t.name == "json_schema_2020_12_tool") else {
                return Err(ClientError::Protocol("no json_schema_2020_12_tool".into()));
            };
            client
                .call_tool("json_schema_echo", json!({"schema": tool.input_schema}))
                .await
                .map(drop)
        }
        "sep-2322-client-request-state" | "http-standard-headers" | "http-invalid-tool-headers" => {
            call_everything(client).await
        }
        // Every authorization scenario: the flow runs on the first refusal
        // (and again on a step-up or a moved authorization server).
        s if s.starts_with("auth/") => {
            client.list_tools().await?;
            client.call_tool("test-tool", json!({})).await.map(drop)
        }
        // initialize, request-metadata, json-schema-ref-no-deref and
        // anything new: the handshake and a listing.
        _ => client.list_tools().await.map(drop),
    }
}

/// `toolCalls` of `MCP_CONFORMANCE_CONTEXT`.
fn context_tool_calls() -> Vec<Value> {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str::<Value>(&c).ok())
        .and_then(|c| c.get("toolCalls").cloned())
        .and_then(|c| c.as_array().cloned())
        .unwrap_or_default()
}

/// Calls every listed tool (with arguments made from its schema), reads
/// every resource and gets every prompt.
async fn call_everything(client: &Client) -> Result<(), ClientError> {
    for tool in client.list_tools().await? {
        let arguments = sample_arguments(&tool.input_schema);
        let result = client.call_tool(&tool.name, arguments).await?;
        if result.is_error == Some(true) {
            eprintln!("tool {} reported an error: {:?}", tool.name, result.content);
        }
    }
    let capabilities = client.server_capabilities().cloned().unwrap_or(Value::Null);
    if capabilities.get("resources").is_some() {
        for resource in client.list_resources().await? {
            client.read_resource(&resource.uri).await?;
        }
    }
    if capabilities.get("prompts").is_some() {
        for prompt in client.list_prompts().await? {
            let arguments = prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true))
                .map(|a| (a.name.clone(), "value".to_owned()));
            client.get_prompt(&prompt.name, arguments).await?;
        }
    }
    Ok(())
}

/// Arguments for a tool's required properties: a value of each one's type.
fn sample_arguments(schema: &Map<String, Value>) -> Value {
    let mut arguments = Map::new();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in required.iter().filter_map(Value::as_str) {
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer") => json!(1),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("value"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
