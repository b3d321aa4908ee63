use mcp_core::mcp_prompt;

/// Not a function.
#[mcp_prompt]
const PLAN: &str = "Plan the week";

fn main() {
    let _ = PLAN;
}
