use mcp_core::{mcp_prompt, protocol::PromptMessage};

/// Plan some days.
#[mcp_prompt]
async fn plan(who: String, days: Option<u32>) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("Plan {} days for {who}", days.unwrap_or(7)))]
}

fn main() {
    let _ = plan::prompt();
}
