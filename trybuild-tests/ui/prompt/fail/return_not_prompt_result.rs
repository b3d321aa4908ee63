use mcp_core::mcp_prompt;

/// Plan the week.
#[mcp_prompt]
async fn plan(who: String) -> usize {
    who.len()
}

fn main() {
    let _ = plan::prompt();
}
