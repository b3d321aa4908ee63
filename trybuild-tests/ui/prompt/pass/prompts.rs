//! Prompts with required and optional arguments and every return shape.

use mcp_core::{mcp_prompt, InvokeContext, McpServer, protocol::{ErrorObject, GetPromptResult, PromptMessage}};

/// Plan the week.
#[mcp_prompt(title = "Weekly plan")]
async fn plan(
    #[arg(description = "Who the plan is for")] who: String,
    /// What to focus on.
    focus: Option<String>,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!(
        "Plan for {who}; focus {}",
        focus.unwrap_or_else(|| "balance".into())
    ))]
}

/// One message.
#[mcp_prompt(name = "one-message", description = "A single message")]
fn one(topic: String) -> PromptMessage {
    PromptMessage::assistant(topic)
}

/// A string becomes one user message.
#[mcp_prompt]
fn text() -> String {
    "Hello".to_owned()
}

/// A full result.
#[mcp_prompt]
fn full(ctx: InvokeContext) -> GetPromptResult {
    let _ = ctx;
    GetPromptResult::new(vec![PromptMessage::user("full")])
}

/// A fallible prompt.
#[mcp_prompt]
async fn fallible(
    ctx: &InvokeContext,
    mood: Option<String>,
) -> Result<Vec<PromptMessage>, ErrorObject> {
    let _ = ctx;
    match mood {
        Some(mood) => Ok(vec![PromptMessage::user(mood)]),
        None => Err(ErrorObject::invalid_params("say how you feel")),
    }
}

fn main() {
    let server = McpServer::builder()
        .prompt(plan::prompt())
        .prompt(one::prompt())
        .prompt(text::prompt())
        .prompt(full::prompt())
        .prompt(fallible::prompt())
        .build()
        .expect("valid server");
    let _ = server;
    let plan = plan::prompt();
    let args = plan.prompt().arguments.as_ref().expect("arguments");
    assert_eq!(args.len(), 2);
    assert_eq!(args[0].required, Some(true));
    assert_eq!(args[1].required, Some(false));
    assert_eq!(one::prompt().name(), "one-message");
}
