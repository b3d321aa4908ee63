use mcp_core::mcp_tool;

#[derive(Debug)]
struct Oops;

/// Divide.
#[mcp_tool]
fn divide(a: i64, b: i64) -> Result<String, Oops> {
    a.checked_div(b).map(|q| q.to_string()).ok_or(Oops)
}

fn main() {
    let _ = divide::tool();
}
