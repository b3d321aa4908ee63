//! MCP Apps (`io.modelcontextprotocol/ui`): a tool with an interactive
//! view. `chart {values}` answers with a text summary and
//! `structuredContent`, and names the view `ui://apps/chart.html`, which a
//! host that renders views shows beside the result: a bar chart of the
//! values drawn as inline SVG by the official `App` API of
//! `@modelcontextprotocol/ext-apps` (loaded from a pinned CDN URL, declared
//! in the view's CSP). The view's button calls `chart_summary`, an app-only
//! tool (`_meta.ui.visibility: ["app"]`: the host keeps it from the model),
//! through the host and shows its answer.
//!
//! Run: `cargo run --example apps` (stdio), or over HTTP:
//! `cargo run --example apps -- --http 127.0.0.1:8080`. `tests/apps/run.sh`
//! opens the view in headless Chromium inside a host page built on the
//! official `AppBridge`.

mod common;

use mcp_core::apps::{client_supports_apps, AppView, Csp, ResourceUi};
use mcp_core::protocol::CallToolResult;
use mcp_core::{mcp_tool, InvokeContext, McpServer, StdioOptions, ToolError};
use serde_json::json;

/// The view's URI.
const VIEW: &str = "ui://apps/chart.html";
/// Where the view loads the `App` API from: the CDN origin its CSP declares.
const CDN: &str = "https://cdn.jsdelivr.net";
/// The most values one chart takes.
const MAX_VALUES: usize = 500;

/// The values, checked: 1 to [`MAX_VALUES`] of them.
fn checked(values: &[f64]) -> Result<(), ToolError> {
    if values.is_empty() {
        return Err(ToolError::new(
            "NO_VALUES",
            "give at least one value to chart",
        ));
    }
    if values.len() > MAX_VALUES {
        return Err(ToolError::new(
            "TOO_MANY_VALUES",
            format!(
                "{} values: a chart takes at most {MAX_VALUES}",
                values.len()
            ),
        ));
    }
    Ok(())
}

/// Smallest, largest, total and mean.
fn stats(values: &[f64]) -> (f64, f64, f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = values.iter().sum();
    // At most MAX_VALUES values: the count is exact as an f64.
    #[allow(clippy::cast_precision_loss)]
    let mean = total / values.len() as f64;
    (min, max, total, mean)
}

/// Draws numbers as a bar chart (hosts without MCP Apps get a summary).
#[mcp_tool(ui = "ui://apps/chart.html")]
async fn chart(
    ctx: &InvokeContext,
    #[arg(description = "The numbers to chart, in order")] values: Vec<f64>,
) -> Result<CallToolResult, ToolError> {
    checked(&values)?;
    let (min, max, _, _) = stats(&values);
    let shown = if client_supports_apps(ctx) {
        " (shown as a bar chart)"
    } else {
        ""
    };
    let mut result = CallToolResult::text(format!(
        "Charted {} values from {min} to {max}{shown}.",
        values.len()
    ));
    if let serde_json::Value::Object(map) = json!({"values": values, "min": min, "max": max}) {
        result.structured_content = Some(map);
    }
    Ok(result)
}

/// Summarises the charted values; called by the chart's view only.
#[mcp_tool(ui = "ui://apps/chart.html", ui_visibility = "app", read_only)]
async fn chart_summary(
    #[arg(description = "The numbers the chart shows")] values: Vec<f64>,
) -> Result<String, ToolError> {
    checked(&values)?;
    let (min, max, total, mean) = stats(&values);
    Ok(format!(
        "{} values: min {min}, max {max}, total {total}, mean {mean:.2}",
        values.len()
    ))
}

fn main() -> std::io::Result<()> {
    let view = AppView::new(VIEW, "Bar chart", include_str!("apps/view.html"))
        .with_title("Bar chart")
        .with_description("The values of a `chart` call as a bar chart")
        .with_ui(
            ResourceUi::new()
                .csp(Csp::new().resource_domain(CDN))
                .prefers_border(true),
        );
    let server = McpServer::builder()
        .server_info("apps", env!("CARGO_PKG_VERSION"))
        .app_view(view)
        .tool(chart::tool())
        .tool(chart_summary::tool())
        .build()
        .map_err(std::io::Error::other)?;
    common::run(server, StdioOptions::default())
}
