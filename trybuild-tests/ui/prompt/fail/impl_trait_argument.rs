use mcp_core::{mcp_prompt, protocol::PromptMessage};

/// Plan the week.
#[mcp_prompt]
fn plan(who: impl Into<String>) -> Vec<PromptMessage> {
    vec![PromptMessage::user(who.into())]
}

fn main() {
    let _ = plan::prompt();
}
