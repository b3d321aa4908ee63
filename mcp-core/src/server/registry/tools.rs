//! The tools' part of the catalog: [`ToolRegistry`], and adding or removing
//! tools while serving.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, Part};
use crate::handler::tool::McpToolDef;
use crate::server::registry::OrderedMap;

/// One version of the tools.
#[derive(Clone, Default)]
pub(crate) struct ToolRegistry {
    pub(crate) tools: OrderedMap<McpToolDef>,
    /// The `tools` array of `tools/list`, serialized once (`None` when a
    /// tool's visibility depends on the caller).
    pub(crate) listing: Option<Arc<Box<RawValue>>>,
    /// A tool declares OAuth scopes.
    pub(crate) scoped: bool,
    /// The arguments each tool mirrors into `Mcp-Param-*` headers
    /// (2026-07-28 HTTP), found once per version.
    #[cfg(feature = "http")]
    pub(crate) param_headers: super::ParamHeaders,
}

impl ToolRegistry {
    pub(crate) fn new(tools: OrderedMap<McpToolDef>) -> Self {
        let scoped = tools.iter().any(|t| !t.scopes().is_empty());
        let per_caller = scoped || tools.iter().any(McpToolDef::has_visible_hook);
        let listing = serialize_listing(per_caller, tools.iter().map(McpToolDef::tool));
        Self {
            #[cfg(feature = "http")]
            param_headers: super::ParamHeaders::new(&tools),
            tools,
            listing,
            scoped,
        }
    }
}

impl Part for ToolRegistry {
    fn scoped(&self) -> bool {
        self.scoped
    }
}

impl super::Registry {
    /// The check of every tool that joins a live catalog (`add_tool`, a
    /// proxied backend's refresh): while tool search is on, its two names
    /// are the server's, never a tool's (the build checks its tools the
    /// same way, in `methods::search::setup`).
    ///
    /// # Errors
    /// [`BuildError::ToolSearchNameTaken`](crate::server::BuildError::ToolSearchNameTaken).
    pub(crate) fn admit_tool_name(&self, name: &str) -> Result<(), crate::server::BuildError> {
        if self.tool_search.is_some() && crate::tool_search::Searcher::is_reserved(name) {
            return Err(crate::server::BuildError::ToolSearchNameTaken(
                name.to_owned(),
            ));
        }
        Ok(())
    }
}
