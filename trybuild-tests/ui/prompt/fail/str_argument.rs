use mcp_core::{mcp_prompt, protocol::PromptMessage};

/// Plan the week.
#[mcp_prompt]
async fn plan(who: &str) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("Plan for {who}"))]
}

fn main() {
    let _ = plan::prompt();
}
