//! Changes a mounted backend makes to a live catalog while serving. Each
//! entry records who added it ([`Owner`]): a backend adds a name or URI
//! only while nobody holds it, replaces or removes only entries it added,
//! and a replacement keeps the OAuth scopes and required state of the
//! entry it replaces. So one backend can never remove, replace or take
//! over an entry of another backend or of the server itself, whatever it
//! lists, de-lists and lists again.

use super::ordered::OrderedMap;
use super::{edit_live, Owner, PromptRegistry, Registry, ResourceRegistry, ToolRegistry};
use crate::context::state_map::StateMap;
use crate::handler::prompt::McpPromptDef;
use crate::handler::resource::McpResourceDef;
use crate::handler::tool::McpToolDef;
use crate::server::BuildError;

/// A part of the catalog an owner holds entries in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// A tool, by name.
    Tool,
    /// A resource, by URI.
    Resource,
    /// A resource template, by its template as written.
    Template,
    /// A prompt, by name.
    Prompt,
}

/// `owner` holds `found` (an entry is held by the owner it records).
fn held_by(found: Option<&Option<Owner>>, owner: &Owner) -> bool {
    matches!(found, Some(Some(o)) if o == owner)
}

/// `state` plus what `more` adds to it, each type once.
fn merged_state(
    mut state: Vec<(std::any::TypeId, &'static str)>,
    more: &[(std::any::TypeId, &'static str)],
) -> Vec<(std::any::TypeId, &'static str)> {
    for need in more {
        if !state.iter().any(|(id, _)| *id == need.0) {
            state.push(*need);
        }
    }
    state
}

/// What ownership needs of a tool, prompt or resource descriptor.
trait OwnedEntry: Sized {
    /// Whom the entry records as having added it.
    fn owner(&self) -> Option<&Owner>;
    /// The scopes and required state of the entry, read and written.
    fn scopes_and_state(&mut self) -> (Vec<String>, &mut Vec<(std::any::TypeId, &'static str)>);
    /// Sets the scopes.
    fn set_scopes(self, scopes: Vec<String>) -> Self;
}

macro_rules! owned_entry {
    ($($def:ty),*) => {$(
        impl OwnedEntry for $def {
            fn owner(&self) -> Option<&Owner> {
                self.owner.as_ref()
            }
            fn scopes_and_state(
                &mut self,
            ) -> (
                Vec<String>,
                &mut Vec<(std::any::TypeId, &'static str)>,
            ) {
                (self.scopes().to_vec(), &mut self.required_state)
            }
            fn set_scopes(self, scopes: Vec<String>) -> Self {
                self.with_scopes(scopes)
            }
        }
    )*};
}
owned_entry!(McpToolDef, McpPromptDef, McpResourceDef);

/// `new`, replacing `old` for `owner`: refused (`taken`) unless `owner`
/// added `old`; otherwise `new` keeps `old`'s scopes and adds its
/// required state, so a backend cannot loosen what the server set.
fn replacing<E: OwnedEntry>(
    mut new: E,
    mut old: E,
    owner: &Owner,
    taken: impl FnOnce() -> BuildError,
) -> Result<E, BuildError> {
    if old.owner() != Some(owner) {
        return Err(taken());
    }
    let (scopes, old_state) = old.scopes_and_state();
    let (_, new_state) = new.scopes_and_state();
    *new_state = merged_state(std::mem::take(old_state), &new_state[..]);
    Ok(new.set_scopes(scopes))
}

/// Replaces or adds `entry` under `name` in `map` for `owner`.
fn put_named<E: OwnedEntry>(
    map: &mut OrderedMap<E>,
    name: String,
    entry: E,
    owner: &Owner,
    taken: impl FnOnce(String) -> BuildError,
) -> Result<(), BuildError> {
    let entry = match map.remove(&name) {
        Some(old) => {
            let key = name.clone();
            replacing(entry, old, owner, || taken(key))?
        }
        None => entry,
    };
    map.insert(name, entry);
    Ok(())
}

/// Removes `name` from `map` if `owner` added it.
fn remove_named<E: OwnedEntry>(map: &mut OrderedMap<E>, name: &str, owner: &Owner) -> bool {
    if map.get(name).and_then(E::owner) != Some(owner) {
        return false;
    }
    map.remove(name);
    true
}

impl Registry {
    /// Whether `owner` holds the entry `key` of `part` now.
    pub(crate) fn holds(&self, owner: &Owner, part: Held, key: &str) -> bool {
        match part {
            Held::Tool => held_by(
                self.tools.snapshot().tools.get(key).map(|t| &t.owner),
                owner,
            ),
            Held::Prompt => held_by(
                self.prompts.snapshot().prompts.get(key).map(|p| &p.owner),
                owner,
            ),
            Held::Resource => held_by(
                self.resources
                    .snapshot()
                    .resources
                    .get(key)
                    .map(|r| &r.owner),
                owner,
            ),
            Held::Template => held_by(
                self.resources
                    .snapshot()
                    .templates
                    .iter()
                    .find(|t| t.key() == key)
                    .map(|t| &t.owner),
                owner,
            ),
        }
    }

    /// Adds `tool` for `owner`, or replaces the tool of that name `owner`
    /// added before (keeping its scopes and required state), given the
    /// server's `state` (what the tool may need). The caller tells the
    /// listeners.
    ///
    /// # Errors
    /// [`BuildError::DuplicateTool`] when the name is held by another owner
    /// or by the server itself (nothing changes),
    /// [`BuildError::ToolSearchNameTaken`] for a name tool search reserves,
    /// and as [`add_tool`](Self::add_tool).
    pub(crate) fn put_owned_tool(
        &self,
        state: &StateMap,
        owner: &Owner,
        mut tool: McpToolDef,
    ) -> Result<(), BuildError> {
        let name = tool.name().to_owned();
        self.admit_tool_name(&name)?;
        tool.default_timeout(self.tool_timeout);
        tool.owner = Some(owner.clone());
        let needs = tool.required_state.clone();
        edit_live(
            &self.tools,
            state,
            &format!("tool `{}`", tool.name()),
            &needs,
            |current| {
                let mut tools = current.tools.clone();
                put_named(&mut tools, name, tool, owner, BuildError::DuplicateTool)?;
                Ok(ToolRegistry::new(tools))
            },
        )
    }

    /// Removes tool `name` if `owner` added it; false (and nothing
    /// removed) when it did not. The caller tells the listeners.
    pub(crate) fn remove_owned_tool(&self, owner: &Owner, name: &str) -> bool {
        self.tools
            .change(|current| {
                let mut tools = current.tools.clone();
                remove_named(&mut tools, name, owner)
                    .then(|| ToolRegistry::new(tools))
                    .ok_or(())
            })
            .is_some_and(|changed| changed.is_ok())
    }

    /// [`put_owned_tool`](Self::put_owned_tool) for a prompt.
    ///
    /// # Errors
    /// [`BuildError::DuplicatePrompt`] when the name is held by someone
    /// else, and as [`add_prompt`](Self::add_prompt).
    pub(crate) fn put_owned_prompt(
        &self,
        state: &StateMap,
        owner: &Owner,
        mut prompt: McpPromptDef,
    ) -> Result<(), BuildError> {
        prompt.owner = Some(owner.clone());
        let what = format!("prompt `{}`", prompt.name());
        let name = prompt.name().to_owned();
        let needs = prompt.required_state.clone();
        edit_live(&self.prompts, state, &what, &needs, |current| {
            let mut prompts = current.prompts.clone();
            put_named(
                &mut prompts,
                name,
                prompt,
                owner,
                BuildError::DuplicatePrompt,
            )?;
            Ok(PromptRegistry::new(prompts))
        })
    }

    /// [`remove_owned_tool`](Self::remove_owned_tool) for a prompt.
    pub(crate) fn remove_owned_prompt(&self, owner: &Owner, name: &str) -> bool {
        self.prompts
            .change(|current| {
                let mut prompts = current.prompts.clone();
                remove_named(&mut prompts, name, owner)
                    .then(|| PromptRegistry::new(prompts))
                    .ok_or(())
            })
            .is_some_and(|changed| changed.is_ok())
    }

    /// [`put_owned_tool`](Self::put_owned_tool) for a resource or a
    /// resource template (by its URI, or its template as written).
    ///
    /// # Errors
    /// [`BuildError::DuplicateResource`] when the URI or template is held
    /// by someone else, [`BuildError::InvalidApp`] for an MCP Apps view
    /// whose CSP is not origins, and as [`add_resource`](Self::add_resource).
    pub(crate) fn put_owned_resource(
        &self,
        state: &StateMap,
        owner: &Owner,
        mut def: McpResourceDef,
    ) -> Result<(), BuildError> {
        if let Some(why) = crate::apps::view_problem(&def) {
            return Err(BuildError::InvalidApp(why));
        }
        def.owner = Some(owner.clone());
        let key = def.key().to_owned();
        let needs = def.required_state.clone();
        edit_live(
            &self.resources,
            state,
            &format!("resource `{}`", def.key()),
            &needs,
            |current| {
                let mut resources = current.resources.clone();
                let mut templates = current.templates.clone();
                let old = if def.is_template() {
                    let at = templates.iter().position(|t| t.key() == key);
                    at.map(|at| templates.remove(at))
                } else {
                    resources.remove(&key)
                };
                let def = match old {
                    Some(old) => replacing(def, old, owner, || BuildError::DuplicateResource(key))?,
                    None => def,
                };
                super::resources::insert(&mut resources, &mut templates, def)?;
                Ok(ResourceRegistry::new(resources, templates))
            },
        )
    }

    /// [`remove_owned_tool`](Self::remove_owned_tool) for the resource at
    /// `key` (`template`: false) or the template written `key` (true).
    pub(crate) fn remove_owned_resource(&self, owner: &Owner, key: &str, template: bool) -> bool {
        self.resources
            .change(|current| {
                let mut resources = current.resources.clone();
                let mut templates = current.templates.clone();
                let found = if template {
                    let at = templates.iter().position(|t| t.key() == key);
                    match at {
                        Some(at) if held_by(Some(&templates[at].owner), owner) => {
                            templates.remove(at);
                            true
                        }
                        _ => false,
                    }
                } else if held_by(resources.get(key).map(|r| &r.owner), owner) {
                    resources.remove(key);
                    true
                } else {
                    false
                };
                if !found {
                    return Err(());
                }
                Ok(ResourceRegistry::new(resources, templates))
            })
            .is_some_and(|changed| changed.is_ok())
    }
}
