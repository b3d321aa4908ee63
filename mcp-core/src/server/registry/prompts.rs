//! The prompts' part of the catalog: [`PromptRegistry`], and adding or
//! removing prompts while serving.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, ListKind, Part};
use crate::handler::prompt::McpPromptDef;
use crate::server::registry::OrderedMap;
use crate::server::{BuildError, McpServer};

/// One version of the prompts.
#[derive(Clone, Default)]
pub(crate) struct PromptRegistry {
    pub(crate) prompts: OrderedMap<McpPromptDef>,
    /// The `prompts` array of `prompts/list`, serialized once (`None` when
    /// a prompt declares scopes: listed per caller).
    pub(crate) listing: Option<Arc<Box<RawValue>>>,
    /// A prompt declares OAuth scopes.
    pub(crate) scoped: bool,
}

impl PromptRegistry {
    /// The catalog of `prompts`.
    ///
    /// # Errors
    /// The first duplicate prompt name.
    pub(crate) fn build(defs: Vec<McpPromptDef>) -> Result<Self, BuildError> {
        let mut prompts = OrderedMap::default();
        for p in defs {
            let name = p.name().to_owned();
            if !prompts.insert(name.clone(), p) {
                return Err(BuildError::DuplicatePrompt(name));
            }
        }
        Ok(Self::new(prompts))
    }

    pub(super) fn new(prompts: OrderedMap<McpPromptDef>) -> Self {
        let scoped = prompts.iter().any(|p| !p.scopes().is_empty());
        Self {
            listing: serialize_listing(scoped, prompts.iter().map(McpPromptDef::prompt)),
            prompts,
            scoped,
        }
    }
}

impl Part for PromptRegistry {
    fn scoped(&self) -> bool {
        self.scoped
    }
}

impl McpServer {
    /// Adds a prompt to a [live](crate::McpServerBuilder::live_catalog)
    /// catalog while serving; returns how many listening clients were told
    /// (`notifications/prompts/list_changed`). Requests that started
    /// before finish with the catalog they started with.
    ///
    /// ```
    /// use mcp_core::{McpPromptDef, McpServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let server = McpServer::builder().live_catalog().build().expect("builds");
    /// let greet = McpPromptDef::new("greet", |_args, _ctx| async { "Say hello.".to_owned() });
    /// assert_eq!(server.add_prompt(greet.clone()).await, Ok(0), "no client listens yet");
    /// assert!(server.add_prompt(greet).await.is_err(), "a name is added once");
    /// assert_eq!(server.remove_prompt("greet").await, Some(0));
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`BuildError::CatalogNotLive`], [`BuildError::DuplicatePrompt`], or
    /// [`BuildError::MissingState`] for a prompt needing state the server
    /// does not have.
    ///
    /// # Cancel safety
    /// The prompt is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_prompt(&self, prompt: impl Into<McpPromptDef>) -> Result<usize, BuildError> {
        let prompt = prompt.into();
        if !self.inner.registry.prompts.is_live() {
            return Err(BuildError::CatalogNotLive);
        }
        self.check_state(
            &format!("prompt `{}`", prompt.name()),
            &prompt.required_state,
        )?;
        let name = prompt.name().to_owned();
        self.inner
            .registry
            .prompts
            .change(|current| {
                let mut prompts = current.prompts.clone();
                if !prompts.insert(name.clone(), prompt) {
                    return Err(BuildError::DuplicatePrompt(name));
                }
                Ok(PromptRegistry::new(prompts))
            })
            .unwrap_or(Err(BuildError::CatalogNotLive))?;
        Ok(self.list_changed(ListKind::Prompts).await)
    }

    /// Removes a prompt from a [live](crate::McpServerBuilder::live_catalog)
    /// catalog; `None` when the catalog is not live or has no such prompt,
    /// else how many listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_prompt`](Self::add_prompt).
    pub async fn remove_prompt(&self, name: &str) -> Option<usize> {
        self.inner
            .registry
            .prompts
            .change(|current| {
                let mut prompts = current.prompts.clone();
                if prompts.remove(name).is_none() {
                    return Err(());
                }
                Ok(PromptRegistry::new(prompts))
            })?
            .ok()?;
        Some(self.list_changed(ListKind::Prompts).await)
    }
}
