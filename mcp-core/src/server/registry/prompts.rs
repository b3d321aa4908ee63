//! The prompts' part of the catalog: [`PromptRegistry`], and adding or
//! removing prompts while serving.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, Part};
use crate::handler::prompt::McpPromptDef;
use crate::server::registry::OrderedMap;
use crate::server::BuildError;

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

    pub(crate) fn new(prompts: OrderedMap<McpPromptDef>) -> Self {
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
