//! Applying a backend's listings to the live parts of the server it is
//! mounted in. Every forwarder carries the backend's owner mark, and the
//! catalog lets a backend add a name or URI only while nobody holds it and
//! replace or remove only what it added. What this backend holds is
//! recorded here only once the catalog took it: an entry refused (held by
//! another backend or by the server itself) is not, so de-listing it
//! touches nothing, and listing it again is refused again while the other
//! holds it (it is taken once it is free).

use std::collections::HashMap;

use super::listing::Listings;
use super::Remote;
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use crate::server::registry::{Held, ListKind};
use crate::{BuildError, McpServer, McpToolDef};

/// The backend's entries the server serves as this backend's, as listed
/// when they were applied: tools by the name the transforms give them
/// (before any prefix), the rest by the backend's own name or URI.
#[derive(Default)]
pub(super) struct Applied {
    tools: HashMap<String, Forwarded>,
    resources: HashMap<String, Resource>,
    templates: HashMap<String, ResourceTemplate>,
    prompts: HashMap<String, Prompt>,
}

/// A forwarder as the transforms made it, with the backend's name of its
/// tool: the same only if both are.
#[derive(Clone)]
struct Forwarded {
    backend: String,
    def: McpToolDef,
}

impl PartialEq for Forwarded {
    fn eq(&self, other: &Self) -> bool {
        self.backend == other.backend && self.def.tool() == other.def.tool()
    }
}

impl Remote {
    /// The backend's `tools` as forwarders, transformed.
    fn forwarded(&self, tools: &[Tool]) -> Vec<Forwarded> {
        self.forwarders(tools)
            .into_iter()
            .map(|(backend, def)| Forwarded { backend, def })
            .collect()
    }
}

/// A backend entry's name on our server: `prefix_name` under a prefix (as
/// a mount names it), else its own.
pub(super) fn local_name(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(p) => format!("{p}_{name}"),
        None => name.to_owned(),
    }
}

/// What to change so that `applied` becomes `now`: the keys gone, and the
/// entries new or changed (of a key listed twice, the first).
fn diff<'a, T: PartialEq>(
    applied: &HashMap<String, T>,
    now: &'a [T],
    key: impl Fn(&T) -> &str,
) -> (Vec<String>, Vec<&'a T>) {
    let mut wanted: HashMap<&str, &T> = HashMap::with_capacity(now.len());
    let mut fresh = Vec::new();
    for entry in now {
        let k = key(entry);
        if wanted.insert(k, entry).is_none() && applied.get(k) != Some(entry) {
            fresh.push(entry);
        }
    }
    let gone = applied
        .keys()
        .filter(|k| !wanted.contains_key(k.as_str()))
        .cloned()
        .collect();
    (gone, fresh)
}

/// Logs an entry the catalog refused.
fn refused(remote: &Remote, what: &str, name: &str, e: &BuildError) {
    tracing::warn!(
        target: "mcp_core::client",
        "backend {}: {what} `{name}` not served: {e}",
        remote.label()
    );
}

impl Applied {
    /// What `server` holds of `remote`'s current listings (the forwarders
    /// its [`builder`](Remote::builder) made and the mount put there).
    pub(super) fn held(remote: &Remote, server: &McpServer, prefix: Option<&str>) -> Self {
        let now = remote.listings();
        let owner = &remote.0.owner;
        let holds = |part: Held, key: &str| server.holds(owner, part, key);
        Self {
            tools: remote
                .forwarded(&now.tools)
                .into_iter()
                .filter(|f| holds(Held::Tool, &local_name(prefix, f.def.name())))
                .map(|f| (f.def.name().to_owned(), f))
                .collect(),
            resources: now
                .resources
                .into_iter()
                .filter(|r| holds(Held::Resource, &r.uri))
                .map(|r| (r.uri.clone(), r))
                .collect(),
            templates: now
                .templates
                .into_iter()
                .filter(|t| holds(Held::Template, &t.uri_template))
                .map(|t| (t.uri_template.clone(), t))
                .collect(),
            prompts: now
                .prompts
                .into_iter()
                .filter(|p| holds(Held::Prompt, &local_name(prefix, &p.name)))
                .map(|p| (p.name.clone(), p))
                .collect(),
        }
    }

    /// Makes the live parts of `server` serve `now` for `remote`: an entry
    /// gone is removed (if this backend holds it), a new or changed one is
    /// added or replaces this backend's own; tools and prompts are named
    /// `prefix_name` under a prefix, resource URIs stay as they are.
    pub(super) async fn apply(
        &mut self,
        remote: &Remote,
        server: &McpServer,
        prefix: Option<&str>,
        now: &Listings,
    ) {
        let owner = &remote.0.owner;
        let local = |name: &str| local_name(prefix, name);
        if server.is_live(ListKind::Tools) {
            // Transformed anew: the transforms see every listing.
            let forwarded = remote.forwarded(&now.tools);
            let (gone, fresh) = diff(&self.tools, &forwarded, |f| f.def.name());
            for name in gone {
                self.tools.remove(&name);
                server.remove_owned_tool(owner, &local(&name)).await;
            }
            for tool in fresh {
                let name = tool.def.name();
                let def = tool.def.clone().renamed(local(name));
                match server.put_owned_tool(owner, def).await {
                    Ok(_) => drop(self.tools.insert(name.to_owned(), tool.clone())),
                    Err(e) => refused(remote, "tool", name, &e),
                }
            }
        }
        if server.is_live(ListKind::Resources) {
            let (gone, fresh) = diff(&self.resources, &now.resources, |r| &r.uri);
            for uri in gone {
                self.resources.remove(&uri);
                server.remove_owned_resource(owner, &uri, false).await;
            }
            for resource in fresh {
                let def = remote.forward_resource(resource.clone());
                match server.put_owned_resource(owner, def).await {
                    Ok(_) => drop(
                        self.resources
                            .insert(resource.uri.clone(), resource.clone()),
                    ),
                    Err(e) => refused(remote, "resource", &resource.uri, &e),
                }
            }
            let (gone, fresh) = diff(&self.templates, &now.templates, |t| &t.uri_template);
            for template in gone {
                self.templates.remove(&template);
                server.remove_owned_resource(owner, &template, true).await;
            }
            for template in fresh {
                let def = remote.forward_template(template.clone());
                match server.put_owned_resource(owner, def).await {
                    Ok(_) => drop(
                        self.templates
                            .insert(template.uri_template.clone(), template.clone()),
                    ),
                    Err(e) => refused(remote, "resource template", &template.uri_template, &e),
                }
            }
        }
        if server.is_live(ListKind::Prompts) {
            let (gone, fresh) = diff(&self.prompts, &now.prompts, |p| &p.name);
            for name in gone {
                self.prompts.remove(&name);
                server.remove_owned_prompt(owner, &local(&name)).await;
            }
            for prompt in fresh {
                let def = remote
                    .forward_prompt(prompt.clone())
                    .renamed(local(&prompt.name));
                match server.put_owned_prompt(owner, def).await {
                    Ok(_) => drop(self.prompts.insert(prompt.name.clone(), prompt.clone())),
                    Err(e) => refused(remote, "prompt", &prompt.name, &e),
                }
            }
        }
    }
}
