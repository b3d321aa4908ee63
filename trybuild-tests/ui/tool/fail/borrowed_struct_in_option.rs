use mcp_core::mcp_tool;

/// A point.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: f64,
}

/// Where, maybe.
#[mcp_tool]
fn at(point: Option<&Point>) -> String {
    point.map(|p| p.x).unwrap_or_default().to_string()
}

fn main() {
    let _ = at::tool();
}
