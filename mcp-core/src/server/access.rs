//! OAuth scopes of tools, resources and prompts: which scopes a request
//! needs, the refusal when its caller lacks them, and the scopes the
//! catalog declares (a resource server's `scopes_supported`).
//!
//! The caller's grants are the [`AuthInfo`](crate::AuthInfo) in the
//! request's extensions; an item without scopes is open to every caller.

use super::McpServer;
use crate::protocol::{ErrorCode, ErrorObject};

/// The `-32003` refusal of a request whose caller lacks `needed` for `what`.
pub(crate) fn insufficient(what: &str, needed: &[String]) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INSUFFICIENT_SCOPE,
        format!(
            "Insufficient scope: {what} needs the scope{} {}",
            if needed.len() == 1 { "" } else { "s" },
            needed.join(" ")
        ),
    )
    .with_data(serde_json::json!({ "scopes": needed }))
}

impl McpServer {
    /// Every scope a tool, resource or prompt of this server declares,
    /// sorted, without repeats (what a resource server publishes as
    /// `scopes_supported`). A live catalog's tools count as they are now.
    pub fn declared_scopes(&self) -> Vec<String> {
        let inner = &self.inner;
        let catalog = inner.tools.snapshot();
        let mut all: Vec<String> = catalog
            .tools
            .iter()
            .flat_map(|t| t.scopes().iter().cloned())
            .chain(
                inner
                    .resources
                    .snapshot()
                    .iter()
                    .flat_map(|r| r.scopes().to_vec()),
            )
            .chain(
                inner
                    .prompts
                    .snapshot()
                    .prompts
                    .iter()
                    .flat_map(|p| p.scopes().to_vec()),
            )
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    /// True when a tool, resource or prompt declares scopes (a transport
    /// checks requests only then).
    #[inline]
    pub(crate) fn has_scoped_items(&self) -> bool {
        let inner = &self.inner;
        inner.tools.scoped() || inner.resources.scoped() || inner.prompts.scoped()
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    /// The scopes a request for `method` needs (the tool, resource or
    /// prompt it names: `field` reads its params' string members), or
    /// `None` when it needs none (another method, an unknown name: the
    /// method answers those). For a transport that refuses before dispatch
    /// (HTTP's 403).
    pub(crate) fn scopes_needed<'a>(
        &self,
        method: &str,
        field: &dyn Fn(&str) -> Option<&'a str>,
    ) -> Option<Vec<String>> {
        let inner = &self.inner;
        let scopes = match method {
            "tools/call" if inner.tools.scoped() => {
                let catalog = inner.tools.snapshot();
                catalog.tools.get(field("name")?)?.scopes().to_vec()
            }
            "prompts/get" if inner.prompts.scoped() => {
                let catalog = inner.prompts.snapshot();
                catalog.prompts.get(field("name")?)?.scopes().to_vec()
            }
            "resources/read" if inner.resources.scoped() => {
                let catalog = inner.resources.snapshot();
                catalog.find(field("uri")?)?.0.scopes().to_vec()
            }
            _ => return None,
        };
        (!scopes.is_empty()).then_some(scopes)
    }
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
/// What a request acts on, as a refusal names it: ``tool `x` `` (`field`
/// reads its params' string members).
pub(crate) fn subject<'a>(method: &str, field: &dyn Fn(&str) -> Option<&'a str>) -> String {
    let field = |key: &str| field(key).unwrap_or_default();
    match method {
        "tools/call" => format!("tool `{}`", field("name")),
        "prompts/get" => format!("prompt `{}`", field("name")),
        "resources/read" => format!("resource `{}`", field("uri")),
        other => format!("`{other}`"),
    }
}
