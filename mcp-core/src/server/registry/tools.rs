//! The tools' part of the catalog: [`ToolRegistry`], and adding or removing
//! tools while serving.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, ListKind, Part};
use crate::handler::tool::McpToolDef;
use crate::server::registry::OrderedMap;
use crate::server::{BuildError, McpServer};

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

impl McpServer {
    /// Adds a tool to a [live](crate::McpServerBuilder::live_tools) catalog
    /// while serving; returns how many listening clients were told (see
    /// [`live_tools`](crate::McpServerBuilder::live_tools)). Calls that
    /// started before finish with the catalog they started with.
    ///
    /// # Errors
    /// [`BuildError::CatalogNotLive`], [`BuildError::DuplicateTool`], or
    /// [`BuildError::MissingState`] for a tool needing state the server
    /// does not have.
    ///
    /// # Cancel safety
    /// The tool is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_tool(&self, tool: impl Into<McpToolDef>) -> Result<usize, BuildError> {
        let mut tool = tool.into();
        tool.default_timeout(self.inner.registry.tool_timeout);
        if !self.inner.registry.tools.is_live() {
            return Err(BuildError::CatalogNotLive);
        }
        self.check_state(&format!("tool `{}`", tool.name()), &tool.required_state)?;
        let name = tool.name().to_owned();
        self.inner
            .registry
            .tools
            .change(|current| {
                let mut tools = current.tools.clone();
                if !tools.insert(name.clone(), tool) {
                    return Err(BuildError::DuplicateTool(name));
                }
                Ok(ToolRegistry::new(tools))
            })
            .unwrap_or(Err(BuildError::CatalogNotLive))?;
        Ok(self.list_changed(ListKind::Tools).await)
    }

    /// Removes a tool from a [live](crate::McpServerBuilder::live_tools)
    /// catalog; `None` when the catalog is not live or has no such tool,
    /// else how many listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_tool`](Self::add_tool).
    pub async fn remove_tool(&self, name: &str) -> Option<usize> {
        self.inner
            .registry
            .tools
            .change(|current| {
                let mut tools = current.tools.clone();
                if tools.remove(name).is_none() {
                    return Err(());
                }
                Ok(ToolRegistry::new(tools))
            })?
            .ok()?;
        Some(self.list_changed(ListKind::Tools).await)
    }

    /// Refuses a handler needing state the server does not have.
    pub(crate) fn check_state(
        &self,
        handler: &str,
        needs: &[(std::any::TypeId, &'static str)],
    ) -> Result<(), BuildError> {
        match needs.iter().find(|(id, _)| !self.inner.state.contains(*id)) {
            Some((_, type_name)) => Err(BuildError::MissingState {
                handler: handler.to_owned(),
                type_name,
            }),
            None => Ok(()),
        }
    }
}
