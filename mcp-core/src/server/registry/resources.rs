//! The resources' part of the catalog: [`ResourceRegistry`] (resources by
//! URI and resource templates), and adding or removing them while serving.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::{serialize_listing, ListKind, Part};
use crate::handler::resource::McpResourceDef;
use crate::server::registry::OrderedMap;
use crate::server::{BuildError, McpServer};

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

    pub(super) fn new(
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
pub(super) fn insert(
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

impl McpServer {
    /// Adds a resource, or a resource template (made with
    /// [`McpResourceDef::template`](crate::McpResourceDef::template)), to a
    /// [live](crate::McpServerBuilder::live_catalog) catalog while serving;
    /// returns how many listening clients were told
    /// (`notifications/resources/list_changed`). Reads that started before
    /// finish with the catalog they started with.
    ///
    /// ```
    /// use mcp_core::{McpResourceDef, McpServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let server = McpServer::builder().live_catalog().build().expect("builds");
    /// let note = McpResourceDef::new("memo://today", "today", |_req, _ctx| async {
    ///     "nothing planned"
    /// });
    /// assert_eq!(server.add_resource(note).await, Ok(0), "no client listens yet");
    /// assert_eq!(server.remove_resource("memo://today").await, Some(0));
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`BuildError::CatalogNotLive`], [`BuildError::DuplicateResource`],
    /// [`BuildError::InvalidUriTemplate`], or [`BuildError::MissingState`]
    /// for a resource needing state the server does not have.
    ///
    /// # Cancel safety
    /// The resource is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_resource(
        &self,
        resource: impl Into<McpResourceDef>,
    ) -> Result<usize, BuildError> {
        let def = resource.into();
        if !self.inner.registry.resources.is_live() {
            return Err(BuildError::CatalogNotLive);
        }
        self.check_state(&format!("resource `{}`", def.key()), &def.required_state)?;
        self.inner
            .registry
            .resources
            .change(|current| {
                let mut resources = current.resources.clone();
                let mut templates = current.templates.clone();
                insert(&mut resources, &mut templates, def)?;
                Ok(ResourceRegistry::new(resources, templates))
            })
            .unwrap_or(Err(BuildError::CatalogNotLive))?;
        Ok(self.list_changed(ListKind::Resources).await)
    }

    /// Removes the resource registered under `uri` (not a template: see
    /// [`remove_resource_template`](Self::remove_resource_template)) from a
    /// [live](crate::McpServerBuilder::live_catalog) catalog; `None` when
    /// the catalog is not live or has no such resource, else how many
    /// listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_resource`](Self::add_resource).
    pub async fn remove_resource(&self, uri: &str) -> Option<usize> {
        self.inner
            .registry
            .resources
            .change(|current| {
                let mut resources = current.resources.clone();
                if resources.remove(uri).is_none() {
                    return Err(());
                }
                Ok(ResourceRegistry::new(resources, current.templates.clone()))
            })?
            .ok()?;
        Some(self.list_changed(ListKind::Resources).await)
    }

    /// Removes the resource template written `template` (as it was
    /// registered, e.g. `file:///{path}`) from a
    /// [live](crate::McpServerBuilder::live_catalog) catalog; `None` when
    /// the catalog is not live or has no such template, else how many
    /// listening clients were told.
    ///
    /// ```
    /// use mcp_core::{McpResourceDef, McpServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let server = McpServer::builder().live_catalog().build().expect("builds");
    /// let files = McpResourceDef::template("file:///{path}", "files", |_req, _ctx| async {
    ///     "a file"
    /// });
    /// server.add_resource(files).await.expect("added");
    /// assert_eq!(server.remove_resource_template("file:///{path}").await, Some(0));
    /// assert_eq!(server.remove_resource_template("file:///{path}").await, None);
    /// # }
    /// ```
    ///
    /// # Cancel safety
    /// As for [`add_resource`](Self::add_resource).
    pub async fn remove_resource_template(&self, template: &str) -> Option<usize> {
        self.inner
            .registry
            .resources
            .change(|current| {
                let Some(at) = current.templates.iter().position(|t| t.key() == template) else {
                    return Err(());
                };
                let mut templates = current.templates.clone();
                templates.remove(at);
                Ok(ResourceRegistry::new(current.resources.clone(), templates))
            })?
            .ok()?;
        Some(self.list_changed(ListKind::Resources).await)
    }
}
