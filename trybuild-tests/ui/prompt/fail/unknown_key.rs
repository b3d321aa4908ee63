use mcp_core::{mcp_prompt, protocol::PromptMessage};

/// Plan the week.
#[mcp_prompt(name = "plan", mime_type = "text/plain")]
async fn plan(who: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("Plan for {who}"))]
}

fn main() {
    let _ = plan::prompt();
}
