//! `#[args]` makes one struct the whole arguments object; without it a
//! struct argument is one property, alone or among other arguments.

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
async fn search(#[args] args: SearchArgs, ctx: InvokeContext) -> String {
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

/// A struct argument alone: still one property.
#[mcp_tool]
fn locate(point: Point) -> String {
    format!("{},{}", point.x, point.y)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpServer::builder()
        .tool(search::tool())
        .tool(distance::tool())
        .tool(locate::tool())
        .build()
        .expect("valid server");
    let tools = server.list_tools();
    let search = tools.iter().find(|t| t.name == "search").expect("listed");
    assert_eq!(search.input_schema["required"], json!(["query"]));
    let distance = tools.iter().find(|t| t.name == "distance").expect("listed");
    assert_eq!(distance.input_schema["required"], json!(["point"]));
    let locate = tools.iter().find(|t| t.name == "locate").expect("listed");
    assert_eq!(locate.input_schema["required"], json!(["point"]));
    let r = server
        .call_tool("distance", json!({"point": {"x": 3.0, "y": 4.0}}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "5");
}
