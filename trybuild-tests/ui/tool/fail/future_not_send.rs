use std::rc::Rc;

use mcp_core::mcp_tool;

async fn pause() {}

/// Count.
#[mcp_tool]
async fn count(n: u32) -> String {
    let shared = Rc::new(n);
    pause().await;
    shared.to_string()
}

fn main() {
    let _ = count::tool();
}
