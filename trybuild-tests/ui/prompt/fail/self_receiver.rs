use mcp_core::{mcp_prompt, protocol::PromptMessage};

struct Planner;

impl Planner {
    /// Plan the week.
    #[mcp_prompt]
    fn plan(self, who: String) -> Vec<PromptMessage> {
        vec![PromptMessage::user(who)]
    }
}

fn main() {
    let _ = Planner.plan("Ada".into());
}
