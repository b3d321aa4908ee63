//! What a listing costs a model: tokens counted by a real tokenizer.
//!
//! Counts use `tiktoken-rs` with the `o200k_base` encoding (the GPT-4o
//! family's; its ranks ship inside the crate, so counting works offline).
//! Other providers' tokenizers differ by some percent; the ranking of the
//! costliest tools, which is what a budget acts on, is stable across them.
//! Each tool is counted as a model receives it: its `name`, `description`
//! and `inputSchema` serialized as compact JSON.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{json, Value};
use tiktoken_rs::CoreBPE;

/// The tokenizer, built once (parsing its ranks takes a moment).
fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// Tokens in `text` (`o200k_base`; 0 if the tokenizer failed to load).
pub fn count(text: &str) -> usize {
    bpe().map_or(0, |bpe| bpe.encode_with_special_tokens(text).len())
}

/// One tool's cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCost {
    /// The tool's name.
    pub name: String,
    /// Tokens of its description.
    pub description: usize,
    /// Tokens of its input schema (compact JSON).
    pub schema: usize,
    /// Tokens of the whole entry as a model receives it.
    pub total: usize,
}

/// The cost of a listing, costliest tool first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenReport {
    /// Every tool, costliest first.
    pub tools: Vec<ToolCost>,
    /// The sum of every tool's total.
    pub total: usize,
}

impl TokenReport {
    /// The report of `tools` (listing items).
    pub fn of(tools: &[Value]) -> Self {
        let mut costs: Vec<ToolCost> = tools
            .iter()
            .map(|tool| {
                let description = tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
                let entry = json!({
                    "name": tool.get("name").cloned().unwrap_or(Value::Null),
                    "description": description,
                    "inputSchema": schema,
                });
                ToolCost {
                    name: tool
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    description: count(description),
                    schema: count(&schema.to_string()),
                    total: count(&entry.to_string()),
                }
            })
            .collect();
        costs.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
        let total = costs.iter().map(|c| c.total).sum();
        Self {
            tools: costs,
            total,
        }
    }

    /// `Ok` within `budget` tokens, else the message naming the costliest
    /// descriptions and schemas.
    ///
    /// # Errors
    /// The listing costs more than `budget`.
    pub fn within(&self, budget: usize) -> Result<(), super::CatalogError> {
        if self.total <= budget {
            return Ok(());
        }
        let mut message = format!(
            "the tool listing costs {} tokens (o200k_base), over the budget of {budget}; the costliest:\n",
            self.total
        );
        for cost in self.tools.iter().take(5) {
            message.push_str(&format!(
                "  {}: {} tokens (description {}, schema {})\n",
                cost.name, cost.total, cost.description, cost.schema
            ));
        }
        Err(super::CatalogError::OverBudget(message))
    }
}

impl fmt::Display for TokenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>7} {:>11} {:>7}  tool",
            "total", "description", "schema"
        )?;
        for c in &self.tools {
            writeln!(
                f,
                "{:>7} {:>11} {:>7}  {}",
                c.total, c.description, c.schema, c.name
            )?;
        }
        write!(
            f,
            "{:>7} tokens for {} tools (o200k_base)",
            self.total,
            self.tools.len()
        )
    }
}

/// Asserts that `server`'s tool listing (2026-07-28) costs at most
/// `budget` tokens.
///
/// # Panics
/// Past the budget, naming the costliest tools — it is a test assertion.
///
/// # Cancel safety
/// Dropping the future only stops reading the catalog.
pub async fn assert_token_budget(server: &crate::McpServer, budget: usize) {
    let tools = super::newest_tools(server).await;
    if let Err(message) = TokenReport::of(&tools).within(budget) {
        panic!("{message}");
    }
}
