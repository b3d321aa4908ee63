//! One struct argument is the whole arguments object; a struct among other
//! arguments is one property.

use mcp_core::{mcp_tool, InvokeContext, McpServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Arguments of `search`.
#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results.
    limit: Option<u32>,
}

/// Search with a struct of arguments.
#[mcp_tool]
async fn search(args: SearchArgs, ctx: InvokeContext) -> String {
    format!("{}:{}:{}", args.query, args.limit.unwrap_or(10), ctx.is_cancelled())
}

/// A point.
#[derive(Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// Distance from the origin, scaled.
#[mcp_tool]
fn distance(point: Point, scale: Option<f64>) -> String {
    ((point.x * point.x + point.y * point.y).sqrt() * scale.unwrap_or(1.0)).to_string()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpServer::builder()
        .tool(search::tool())
        .tool(distance::tool())
        .build()
        .expect("valid server");
    let tools = server.list_tools();
    let search = tools.iter().find(|t| t.name == "search").expect("listed");
    assert_eq!(search.input_schema["required"], json!(["query"]));
    let distance = tools.iter().find(|t| t.name == "distance").expect("listed");
    assert_eq!(distance.input_schema["required"], json!(["point"]));
    let r = server
        .call_tool("distance", json!({"point": {"x": 3.0, "y": 4.0}}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "5");
}
