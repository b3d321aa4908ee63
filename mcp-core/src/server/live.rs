//! The live catalog's public entry points: tools, resources and prompts
//! added and removed while serving. Each edits the [`Registry`](super::registry::Registry)
//! part it names (after checking the state the handler needs) and then
//! tells the listeners through the registry and the bus.

use super::registry::resources::insert;
use super::registry::{
    edit_live, ListKind, Part, PromptRegistry, ResourceRegistry, ToolRegistry, Versions,
};
#[cfg(feature = "client")]
use super::registry::{Held, Owner};
use super::{BuildError, McpServer};
use crate::handler::prompt::McpPromptDef;
use crate::handler::resource::McpResourceDef;
use crate::handler::tool::McpToolDef;

impl McpServer {
    /// Adds a tool to a [live](crate::McpServerBuilder::live_tools) catalog
    /// while serving; returns how many listening clients were told (see
    /// [`live_tools`](crate::McpServerBuilder::live_tools)). Calls that
    /// started before finish with the catalog they started with.
    ///
    /// # Errors
    /// [`BuildError::CatalogNotLive`], [`BuildError::DuplicateTool`],
    /// [`BuildError::MissingState`] for a tool needing state the server
    /// does not have, or [`BuildError::ToolSearchNameTaken`].
    ///
    /// # Cancel safety
    /// The tool is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_tool(&self, tool: impl Into<McpToolDef>) -> Result<usize, BuildError> {
        let mut tool = tool.into();
        tool.default_timeout(self.inner.pipeline.registry.tool_timeout);
        let name = tool.name().to_owned();
        self.inner.pipeline.registry.admit_tool_name(&name)?;
        let needs = tool.required_state.clone();
        self.add_live(
            &self.inner.pipeline.registry.tools,
            ListKind::Tools,
            &format!("tool `{}`", tool.name()),
            &needs,
            |current| {
                let mut tools = current.tools.clone();
                if !tools.insert(name.clone(), tool) {
                    return Err(BuildError::DuplicateTool(name));
                }
                Ok(ToolRegistry::new(tools))
            },
        )
        .await
    }

    /// Removes a tool from a [live](crate::McpServerBuilder::live_tools)
    /// catalog; `None` when the catalog is not live or has no such tool,
    /// else how many listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_tool`](Self::add_tool).
    pub async fn remove_tool(&self, name: &str) -> Option<usize> {
        self.inner
            .pipeline
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

    /// The one way an entry joins a live part (see
    /// [`edit_live`](super::registry::edit_live)), then the
    /// listeners of `kind` are told (how many is returned).
    pub(crate) async fn add_live<C: Part>(
        &self,
        part: &Versions<C>,
        kind: ListKind,
        what: &str,
        needs: &[(std::any::TypeId, &'static str)],
        next: impl FnOnce(&C) -> Result<C, BuildError>,
    ) -> Result<usize, BuildError> {
        let state = &self.pipeline().handlers.state;
        edit_live(part, state, what, needs, next)?;
        Ok(self.list_changed(kind).await)
    }

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
        let name = prompt.name().to_owned();
        let needs = prompt.required_state.clone();
        self.add_live(
            &self.inner.pipeline.registry.prompts,
            ListKind::Prompts,
            &format!("prompt `{}`", prompt.name()),
            &needs,
            |current| {
                let mut prompts = current.prompts.clone();
                if !prompts.insert(name.clone(), prompt) {
                    return Err(BuildError::DuplicatePrompt(name));
                }
                Ok(PromptRegistry::new(prompts))
            },
        )
        .await
    }

    /// Removes a prompt from a [live](crate::McpServerBuilder::live_catalog)
    /// catalog; `None` when the catalog is not live or has no such prompt,
    /// else how many listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_prompt`](Self::add_prompt).
    pub async fn remove_prompt(&self, name: &str) -> Option<usize> {
        self.inner
            .pipeline
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
    /// [`BuildError::InvalidUriTemplate`], [`BuildError::MissingState`]
    /// for a resource needing state the server does not have, or
    /// [`BuildError::InvalidApp`] for an MCP Apps view whose CSP is not
    /// origins.
    ///
    /// # Cancel safety
    /// The resource is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_resource(
        &self,
        resource: impl Into<McpResourceDef>,
    ) -> Result<usize, BuildError> {
        let def = resource.into();
        if let Some(why) = crate::apps::view_problem(&def) {
            return Err(BuildError::InvalidApp(why));
        }
        let needs = def.required_state.clone();
        self.add_live(
            &self.inner.pipeline.registry.resources,
            ListKind::Resources,
            &format!("resource `{}`", def.key()),
            &needs,
            |current| {
                let mut resources = current.resources.clone();
                let mut templates = current.templates.clone();
                insert(&mut resources, &mut templates, def)?;
                Ok(ResourceRegistry::new(resources, templates))
            },
        )
        .await
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
            .pipeline
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
            .pipeline
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

/// A mounted backend's edits (see `registry/owned.rs`): the registry
/// changes, then the listeners of the part are told.
#[cfg(feature = "client")]
impl McpServer {
    /// Whether `kind`'s part of the catalog is live.
    pub(crate) fn is_live(&self, kind: ListKind) -> bool {
        self.inner.pipeline.registry.is_live(kind)
    }

    /// Whether `owner` holds the entry `key` of `part` now.
    pub(crate) fn holds(&self, owner: &Owner, part: Held, key: &str) -> bool {
        self.pipeline().registry.holds(owner, part, key)
    }

    /// Adds or replaces `owner`'s tool; how many listening clients were
    /// told.
    ///
    /// # Errors
    /// As [`Registry::put_owned_tool`](super::registry::Registry::put_owned_tool).
    pub(crate) async fn put_owned_tool(
        &self,
        owner: &Owner,
        tool: McpToolDef,
    ) -> Result<usize, BuildError> {
        let pipeline = self.pipeline();
        let state = &pipeline.handlers.state;
        pipeline.registry.put_owned_tool(state, owner, tool)?;
        Ok(self.list_changed(ListKind::Tools).await)
    }

    /// Removes `owner`'s tool `name`; `None` when `owner` holds none of
    /// that name, else how many listening clients were told.
    pub(crate) async fn remove_owned_tool(&self, owner: &Owner, name: &str) -> Option<usize> {
        let registry = &self.pipeline().registry;
        registry.remove_owned_tool(owner, name).then_some(())?;
        Some(self.list_changed(ListKind::Tools).await)
    }

    /// [`put_owned_tool`](Self::put_owned_tool) for a prompt.
    ///
    /// # Errors
    /// As [`Registry::put_owned_prompt`](super::registry::Registry::put_owned_prompt).
    pub(crate) async fn put_owned_prompt(
        &self,
        owner: &Owner,
        prompt: McpPromptDef,
    ) -> Result<usize, BuildError> {
        let pipeline = self.pipeline();
        let state = &pipeline.handlers.state;
        pipeline.registry.put_owned_prompt(state, owner, prompt)?;
        Ok(self.list_changed(ListKind::Prompts).await)
    }

    /// [`remove_owned_tool`](Self::remove_owned_tool) for a prompt.
    pub(crate) async fn remove_owned_prompt(&self, owner: &Owner, name: &str) -> Option<usize> {
        let registry = &self.pipeline().registry;
        registry.remove_owned_prompt(owner, name).then_some(())?;
        Some(self.list_changed(ListKind::Prompts).await)
    }

    /// [`put_owned_tool`](Self::put_owned_tool) for a resource or a
    /// resource template.
    ///
    /// # Errors
    /// As [`Registry::put_owned_resource`](super::registry::Registry::put_owned_resource).
    pub(crate) async fn put_owned_resource(
        &self,
        owner: &Owner,
        def: McpResourceDef,
    ) -> Result<usize, BuildError> {
        let pipeline = self.pipeline();
        let state = &pipeline.handlers.state;
        pipeline.registry.put_owned_resource(state, owner, def)?;
        Ok(self.list_changed(ListKind::Resources).await)
    }

    /// [`remove_owned_tool`](Self::remove_owned_tool) for the resource at
    /// `key` (`template`: false) or the template written `key` (true).
    pub(crate) async fn remove_owned_resource(
        &self,
        owner: &Owner,
        key: &str,
        template: bool,
    ) -> Option<usize> {
        let registry = &self.pipeline().registry;
        registry
            .remove_owned_resource(owner, key, template)
            .then_some(())?;
        Some(self.list_changed(ListKind::Resources).await)
    }
}
