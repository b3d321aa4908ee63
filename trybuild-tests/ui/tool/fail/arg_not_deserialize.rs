use mcp_core::mcp_tool;

struct Point {
    x: f64,
    y: f64,
}

/// Distance of a point from a center.
#[mcp_tool]
async fn distance(point: Point, scale: f64) -> String {
    ((point.x * point.x + point.y * point.y).sqrt() * scale).to_string()
}

fn main() {
    let _ = distance::tool();
}
