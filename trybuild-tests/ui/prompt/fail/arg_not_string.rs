use mcp_core::{mcp_prompt, protocol::PromptMessage};

/// Plan some days.
#[mcp_prompt]
async fn plan(days: u32) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("Plan {days} days"))]
}

fn main() {
    let _ = plan::prompt();
}
