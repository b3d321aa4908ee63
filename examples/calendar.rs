//! One calendar exposed three ways, one per MCP primitive:
//!
//! - the **tool** `create_event` (the model decides to write),
//! - the **resource** `calendar://week` (the application attaches it),
//! - the **prompt** `prepare_week` (the person asks for it).
//!
//! ```sh
//! cargo run --example calendar
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use mcp_core::{
    serve_stdio, CallToolResult, ElicitResponse, InvokeContext, McpPromptDef, McpResourceDef,
    McpServer, McpToolDef, PromptArgs, PromptArgument, PromptMessage, ResourceRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    id: String,
    title: String,
    starts_at: String,
}

type Calendar = Arc<Mutex<Vec<Event>>>;

/// What `create_event` asks for when the start time is missing.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct StartTime {
    /// Start, ISO 8601 UTC.
    #[schemars(extend("format" = "date-time"))]
    starts_at: String,
}

fn create_event(calendar: Calendar) -> McpToolDef {
    McpToolDef::new(
        "create_event",
        "Create a calendar event. Writes to the calendar.",
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "description": "Event title." },
                "startsAt": { "type": "string", "format": "date-time", "description": "Start, ISO 8601 UTC." },
            },
            "required": ["title"],
        }),
        move |args, ctx: InvokeContext| {
            let calendar = Arc::clone(&calendar);
            async move {
                let Some(title) = args.get("title").and_then(Value::as_str) else {
                    return CallToolResult::error("`title` is required and must be a string");
                };
                let starts_at = match args.get("startsAt").and_then(Value::as_str) {
                    Some(s) => s.to_owned(),
                    None => match ctx.elicitation() {
                        Some(e) => match e.form::<StartTime>(&format!("When should {title:?} start?")).await {
                            Ok(ElicitResponse::Accept(answer)) => answer.starts_at,
                            Ok(_) => return CallToolResult::error("no start time given; event not created"),
                            Err(err) => return CallToolResult::error(err.message),
                        },
                        None => return CallToolResult::error("`startsAt` is required: give an ISO 8601 UTC time"),
                    },
                };
                let event = {
                    let mut events = calendar.lock().unwrap_or_else(PoisonError::into_inner);
                    let event = Event {
                        id: format!("e{}", events.len() + 1),
                        title: title.to_owned(),
                        starts_at,
                    };
                    events.push(event.clone());
                    event
                };
                let structured = match serde_json::to_value(&event) {
                    Ok(Value::Object(map)) => map,
                    _ => Default::default(),
                };
                CallToolResult::text(format!("Created {}: {} at {}", event.id, event.title, event.starts_at))
                    .with_structured(structured)
            }
        },
    )
    .with_output_schema(
        json!({
            "type": "object",
            "properties": {
                "id": { "type": "string" },
                "title": { "type": "string" },
                "startsAt": { "type": "string", "format": "date-time" },
            },
            "required": ["id", "title", "startsAt"],
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    )
}

fn week(calendar: Calendar) -> McpResourceDef {
    McpResourceDef::new(
        "calendar://week",
        "This week",
        move |_req: ResourceRequest, _ctx: InvokeContext| {
            let calendar = Arc::clone(&calendar);
            async move {
                let events = calendar
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                serde_json::to_string(&events)
            }
        },
    )
    .with_description("The events of the current week")
    .with_mime_type("application/json")
}

fn prepare_week() -> McpPromptDef {
    McpPromptDef::new(
        "prepare_week",
        |args: PromptArgs, _ctx: InvokeContext| async move {
            let focus = args.get("focus").map_or("balance", String::as_str);
            vec![PromptMessage::user(format!(
                "Read calendar://week and draft a plan. Focus: {focus}."
            ))]
        },
    )
    .with_description("Read the week and draft a plan.")
    .with_arguments(vec![PromptArgument::optional(
        "focus",
        "What to optimise the week for",
    )])
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let calendar: Calendar = Arc::new(Mutex::new(vec![
        Event {
            id: "e1".into(),
            title: "Standup".into(),
            starts_at: "2026-09-07T09:00:00Z".into(),
        },
        Event {
            id: "e2".into(),
            title: "Design review".into(),
            starts_at: "2026-09-09T15:00:00Z".into(),
        },
    ]));
    let server = McpServer::builder()
        .server_info("calendar", env!("CARGO_PKG_VERSION"))
        .tool(create_event(Arc::clone(&calendar)))
        .resource(week(calendar))
        .prompt(prepare_week())
        .build()
        .map_err(std::io::Error::other)?;
    serve_stdio(server, Default::default()).wait().await
}
