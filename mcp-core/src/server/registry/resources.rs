//! The resources' part of the catalog: [`ResourceRegistry`] (resources by
//! URI and resource templates), and adding or removing them while serving.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, Part};
use crate::handler::resource::McpResourceDef;
use crate::server::registry::OrderedMap;
use crate::server::BuildError;

/// One version of the resources and resource templates.
#[derive(Clone, Default)]
pub(crate) struct ResourceRegistry {
    pub(crate) resources: OrderedMap<McpResourceDef>,
    pub(crate) templates: Vec<McpResourceDef>,
    /// The `resources` array of `resources/list`, serialized once (`None`
    /// when a resource or template declares scopes: listed per caller).
    pub(crate) listing: Option<Arc<Box<RawValue>>>,
    /// The `resourceTemplates` array of `resources/templates/list`, likewise.
    pub(crate) templates_listing: Option<Arc<Box<RawValue>>>,
    /// A resource or template declares OAuth scopes.
    pub(crate) scoped: bool,
}

impl ResourceRegistry {
    /// The catalog of `defs`.
    ///
    /// # Errors
    /// The first duplicate URI (or template) or unparsable template.
    pub(crate) fn build(defs: Vec<McpResourceDef>) -> Result<Self, BuildError> {
        let mut resources = OrderedMap::default();
        let mut templates = Vec::new();
        for def in defs {
            insert(&mut resources, &mut templates, def)?;
        }
        Ok(Self::new(resources, templates))
    }

    pub(crate) fn new(
        resources: OrderedMap<McpResourceDef>,
        templates: Vec<McpResourceDef>,
    ) -> Self {
        let scoped = resources
            .iter()
            .chain(&templates)
            .any(|r| !r.scopes().is_empty());
        Self {
            listing: serialize_listing(scoped, resources.iter().filter_map(|r| r.resource())),
            templates_listing: serialize_listing(
                scoped,
                templates.iter().filter_map(|r| r.resource_template()),
            ),
            resources,
            templates,
            scoped,
        }
    }

    /// No resource and no template.
    pub(crate) fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    /// The resource registered under `uri`, else the first template it
    /// matches (with the template's variables).
    pub(crate) fn find(&self, uri: &str) -> Option<(&McpResourceDef, HashMap<String, String>)> {
        match self.resources.get(uri) {
            Some(def) => Some((def, HashMap::new())),
            None => self
                .templates
                .iter()
                .find_map(|t| t.match_template(uri).map(|vars| (t, vars))),
        }
    }

    /// Every resource and template.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &McpResourceDef> {
        self.resources.iter().chain(&self.templates)
    }
}

impl Part for ResourceRegistry {
    fn scoped(&self) -> bool {
        self.scoped
    }
}

/// Adds `def` to the resources or the templates.
pub(crate) fn insert(
    resources: &mut OrderedMap<McpResourceDef>,
    templates: &mut Vec<McpResourceDef>,
    def: McpResourceDef,
) -> Result<(), BuildError> {
    let key = def.key().to_owned();
    if let Some(reason) = def.template_error() {
        return Err(BuildError::InvalidUriTemplate {
            template: key,
            reason: reason.to_owned(),
        });
    }
    if def.is_template() {
        if templates.iter().any(|t| t.key() == key) {
            return Err(BuildError::DuplicateResource(key));
        }
        templates.push(def);
    } else if !resources.insert(key.clone(), def) {
        return Err(BuildError::DuplicateResource(key));
    }
    Ok(())
}
