//! One calendar exposed three ways, one per MCP primitive:
//!
//! - the **tool** `create_event` (the model decides to write),
//! - the **resource** `calendar://week` (the application attaches it),
//! - the **prompt** `prepare_week` (the person asks for it).
//!
//! The calendar reaches the handlers as typed application state
//! (`State<Calendar>`), registered once with `McpServer::builder().state(..)`.
//!
//! Run: `cargo run --example calendar`
//! Add `--http 127.0.0.1:8080` to serve over Streamable HTTP instead of stdio.

mod common;

use std::sync::{Arc, Mutex, PoisonError};

use mcp_core::{
    context::ElicitResponse,
    handler::IntoToolResult,
    mcp_prompt, mcp_resource, mcp_tool,
    protocol::{CallToolResult, PromptMessage},
    InvokeContext, McpServer, State,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One calendar event.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Event {
    id: String,
    title: String,
    /// Start, ISO 8601 UTC.
    #[schemars(extend("format" = "date-time"))]
    starts_at: String,
}

/// The shared calendar.
#[derive(Clone, Default)]
struct Calendar(Arc<Mutex<Vec<Event>>>);

impl Calendar {
    fn events(&self) -> Vec<Event> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn add(&self, title: String, starts_at: String) -> Event {
        let mut events = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let event = Event {
            id: format!("e{}", events.len() + 1),
            title,
            starts_at,
        };
        events.push(event.clone());
        event
    }
}

/// Arguments of `create_event`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct NewEvent {
    /// Event title.
    title: String,
    /// Start, ISO 8601 UTC. Asked for when missing.
    #[schemars(extend("format" = "date-time"))]
    starts_at: Option<String>,
}

/// What `create_event` asks for when the start time is missing.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct StartTime {
    /// Start, ISO 8601 UTC.
    #[schemars(extend("format" = "date-time"))]
    starts_at: String,
}

/// A created event: a text line for the model plus the event as structured content.
struct Created(Event);

impl IntoToolResult for Created {
    fn into_tool_result(self) -> CallToolResult {
        let Event {
            id,
            title,
            starts_at,
        } = &self.0;
        let text = format!("Created {id}: {title} at {starts_at}");
        match serde_json::to_value(&self.0) {
            Ok(Value::Object(map)) => CallToolResult::text(text).with_structured(map),
            _ => CallToolResult::text(text),
        }
    }

    fn output_schema() -> Option<Map<String, Value>> {
        Some(mcp_core::handler::schema_for::<Event>())
    }
}

/// Create a calendar event. Writes to the calendar.
#[mcp_tool(destructive = false)]
async fn create_event(
    #[args] args: NewEvent,
    State(calendar): State<Calendar>,
    ctx: InvokeContext,
) -> Result<Created, String> {
    let starts_at = match (args.starts_at, ctx.elicitation()) {
        (Some(starts_at), _) => starts_at,
        (None, Some(elicitation)) => {
            let question = format!("When should {:?} start?", args.title);
            match elicitation
                .form::<StartTime>(&question)
                .await
                .map_err(|e| e.message)?
            {
                ElicitResponse::Accept(answer) => answer.starts_at,
                ElicitResponse::Decline | ElicitResponse::Cancel => {
                    return Err("no start time given; event not created".into())
                }
            }
        }
        (None, None) => return Err("`startsAt` is required: give an ISO 8601 UTC time".into()),
    };
    Ok(Created(calendar.add(args.title, starts_at)))
}

/// The events of the current week.
#[mcp_resource(
    uri = "calendar://week",
    name = "This week",
    mime_type = "application/json"
)]
async fn week(State(calendar): State<Calendar>) -> Result<String, serde_json::Error> {
    serde_json::to_string(&calendar.events())
}

/// Read the week and draft a plan.
#[mcp_prompt]
async fn prepare_week(
    #[arg(description = "What to optimise the week for (default: balance)")] focus: Option<String>,
) -> PromptMessage {
    let focus = focus.unwrap_or_else(|| "balance".to_owned());
    PromptMessage::user(format!(
        "Read calendar://week and draft a plan. Focus: {focus}."
    ))
}

// Current-thread runtime for stdio, multi-threaded for HTTP (`common::run`).
fn main() -> std::io::Result<()> {
    let calendar = Calendar::default();
    calendar.add("Standup".into(), "2026-09-07T09:00:00Z".into());
    calendar.add("Design review".into(), "2026-09-09T15:00:00Z".into());
    let server = common::with_telemetry(McpServer::builder())
        .server_info("calendar", env!("CARGO_PKG_VERSION"))
        .state(calendar)
        .tool(create_event::tool())
        .resource(week::resource())
        .prompt(prepare_week::prompt())
        .build()
        .map_err(std::io::Error::other)?;
    common::run(server, mcp_core::StdioOptions::default())
}
