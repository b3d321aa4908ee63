//! Keeping in step with a backend's listings: on the backend's
//! `notifications/{tools,resources,prompts}/list_changed` (a legacy
//! session, or a 2026-07-28 `subscriptions/listen`) and after every TTL,
//! the listings are fetched again. Tool forwarders are added, replaced or
//! removed in the live catalog; the resource, template and prompt
//! listings are cached on the [`Remote`] and each change is announced on
//! [`Remote::listings_changed`].

use std::collections::HashMap;
use std::sync::PoisonError;
use std::time::Duration;

use serde_json::Value;

use super::Remote;
use crate::client::Client;
use crate::client::{ClientError, RequestOptions};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use crate::McpServer;

/// The backend notifications that start a refresh.
pub(super) const LIST_CHANGED: [&str; 3] = [
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
];

/// A backend's resources, resource templates and prompts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Listings {
    pub(super) resources: Vec<Resource>,
    pub(super) templates: Vec<ResourceTemplate>,
    pub(super) prompts: Vec<Prompt>,
}

impl Listings {
    /// Lists what the backend's capabilities say it has.
    pub(super) async fn fetch(client: &Client) -> Result<Self, ClientError> {
        let offers = |kind: &str| {
            client
                .server_capabilities()
                .is_some_and(|c| c.get(kind).is_some())
        };
        let mut listings = Self::default();
        if offers("resources") {
            listings.resources = client.list_resources().await?;
            listings.templates = client.list_resource_templates().await?;
        }
        if offers("prompts") {
            listings.prompts = client.list_prompts().await?;
        }
        Ok(listings)
    }
}

/// How long a backend listing is trusted without a change notification.
pub const DEFAULT_LISTING_TTL: Duration = Duration::from_secs(300);

/// A task that ends when its handle is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Remote {
    /// The backend's resources as last listed (by
    /// [`builder`](Self::builder) or a [`sync_tools`](Self::sync_tools)
    /// refresh).
    pub fn listed_resources(&self) -> Vec<Resource> {
        self.listings().resources
    }

    /// The backend's resource templates as last listed.
    pub fn listed_resource_templates(&self) -> Vec<ResourceTemplate> {
        self.listings().templates
    }

    /// The backend's prompts as last listed.
    pub fn listed_prompts(&self) -> Vec<Prompt> {
        self.listings().prompts
    }

    fn listings(&self) -> Listings {
        self.0
            .listings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A counter bumped each time a [`sync_tools`](Self::sync_tools)
    /// refresh finds the backend's resources, templates or prompts
    /// changed (read them with [`listed_resources`](Self::listed_resources)
    /// and the like). A server's resources and prompts are fixed when it
    /// is built, so this is where a deployment learns to rebuild it (or
    /// forward them another way).
    pub fn listings_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.listings_version.subscribe()
    }

    /// Keeps `server`'s tools (it must be built with
    /// [`live_tools`](crate::McpServerBuilder::live_tools)) in step with the
    /// backend's: the forwarders [`builder`](Self::builder) made (renamed
    /// `prefix_name` when mounted under `prefix`) are replaced, added or
    /// removed whenever the backend's listing changes, checked on its
    /// change notifications and at least every `ttl`; the resource,
    /// template and prompt listings are refreshed at the same times (see
    /// [`listings_changed`](Self::listings_changed)), and applied to
    /// `server`'s resources and prompts when those are live too
    /// ([`live_catalog`](crate::McpServerBuilder::live_catalog)). Runs
    /// until the returned task is aborted.
    pub fn sync_tools(
        &self,
        server: McpServer,
        prefix: Option<String>,
        ttl: Duration,
    ) -> tokio::task::JoinHandle<()> {
        let remote = self.clone();
        tokio::spawn(async move {
            // Ends with this task (aborted or not).
            let mut listen: Option<AbortOnDrop> = None;
            // What `server` serves of the backend's resources and prompts.
            let mut applied = remote.listings();
            loop {
                if listen.as_ref().is_none_or(|l| l.0.is_finished()) {
                    listen = remote.listen_for_changes().await.map(AbortOnDrop);
                }
                tokio::select! {
                    () = remote.0.tools_changed.notified() => {}
                    () = tokio::time::sleep(ttl) => {}
                }
                if let Err(e) = remote
                    .refresh_with_reconnect(&server, prefix.as_deref())
                    .await
                {
                    tracing::warn!(target: "mcp_core::client", "refreshing the tools of {}: {e}", remote.label());
                }
                let now = remote.listings();
                if now != applied {
                    remote
                        .apply_listings(&server, prefix.as_deref(), &applied, &now)
                        .await;
                    applied = now;
                }
            }
        })
    }

    /// On 2026-07-28 a backend tells of changes only on a listen: hold one
    /// open for the lists whose changes the backend offers to announce.
    async fn listen_for_changes(&self) -> Option<tokio::task::JoinHandle<()>> {
        let client = self.client().await.ok()?;
        let offers = |kind: &str| {
            client
                .server_capabilities()
                .and_then(|c| c.get(kind))
                .and_then(|t| t.get("listChanged"))
                .and_then(Value::as_bool)
                == Some(true)
        };
        let mut wanted = serde_json::Map::new();
        for (kind, key) in [
            ("tools", "toolsListChanged"),
            ("resources", "resourcesListChanged"),
            ("prompts", "promptsListChanged"),
        ] {
            if offers(kind) {
                wanted.insert(key.into(), Value::Bool(true));
            }
        }
        if !client.is_modern() || wanted.is_empty() {
            return None;
        }
        Some(tokio::spawn(async move {
            let _ = client
                .listen(Value::Object(wanted), &RequestOptions::new())
                .await;
        }))
    }

    /// [`refresh`](Self::refresh); a backend that went away is forgotten,
    /// so the next refresh (or call) reconnects.
    async fn refresh_with_reconnect(
        &self,
        server: &McpServer,
        prefix: Option<&str>,
    ) -> Result<(), ClientError> {
        let client = self.client().await?;
        let outcome = self.refresh(server, prefix).await;
        if let Err(e) = &outcome {
            if super::backend_lost(&client, e) {
                self.drop_client(&client);
            }
        }
        outcome
    }

    /// Applies what changed in the backend's resources, templates and
    /// prompts to the parts of `server` that are live (built with
    /// [`live_catalog`](crate::McpServerBuilder::live_catalog)): an entry
    /// gone is removed, a new one added, a changed one replaced. Resource
    /// URIs stay as they are; prompts are renamed `prefix_name` under a
    /// prefix, as a mount names them.
    async fn apply_listings(
        &self,
        server: &McpServer,
        prefix: Option<&str>,
        before: &Listings,
        now: &Listings,
    ) {
        let local = |name: &str| local_name(prefix, name);
        let warn = |what: &str, e: &crate::BuildError| {
            if !matches!(e, crate::BuildError::CatalogNotLive) {
                tracing::warn!(target: "mcp_core::client", "proxying {what}: {e}");
            }
        };
        for old in gone(&before.resources, &now.resources) {
            server.remove_resource(&old.uri).await;
        }
        for new in gone(&now.resources, &before.resources) {
            let added = server.add_resource(self.forward_resource(new.clone()));
            if let Err(e) = added.await {
                warn(&new.uri, &e);
            }
        }
        for old in gone(&before.templates, &now.templates) {
            server.remove_resource_template(&old.uri_template).await;
        }
        for new in gone(&now.templates, &before.templates) {
            let added = server.add_resource(self.forward_template(new.clone()));
            if let Err(e) = added.await {
                warn(&new.uri_template, &e);
            }
        }
        for old in gone(&before.prompts, &now.prompts) {
            server.remove_prompt(&local(&old.name)).await;
        }
        for new in gone(&now.prompts, &before.prompts) {
            let def = self.forward_prompt(new.clone()).renamed(local(&new.name));
            if let Err(e) = server.add_prompt(def).await {
                warn(&new.name, &e);
            }
        }
    }

    /// Lists the backend's tools and applies the difference to `server`.
    async fn refresh(&self, server: &McpServer, prefix: Option<&str>) -> Result<(), ClientError> {
        let client = self.client().await?;
        let listings = Listings::fetch(&client).await?;
        let changed = {
            let mut known = self
                .0
                .listings
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let changed = *known != listings;
            *known = listings;
            changed
        };
        if changed {
            self.0.listings_version.send_modify(|v| *v += 1);
        }
        let offers_tools = client
            .server_capabilities()
            .is_some_and(|c| c.get("tools").is_some());
        if !offers_tools {
            return Ok(());
        }
        let fresh = client.list_tools().await?;
        let old: HashMap<String, Tool> = {
            let mut known = self.0.tools.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *known, fresh.clone())
                .into_iter()
                .map(|t| (t.name.clone(), t))
                .collect()
        };
        let local = |name: &str| local_name(prefix, name);
        let fresh_names: HashMap<&str, &Tool> =
            fresh.iter().map(|t| (t.name.as_str(), t)).collect();
        for name in old.keys() {
            if !fresh_names.contains_key(name.as_str()) {
                server.remove_tool(&local(name)).await;
            }
        }
        for tool in &fresh {
            match old.get(&tool.name) {
                Some(before) if before == tool => continue,
                Some(_) => {
                    server.remove_tool(&local(&tool.name)).await;
                }
                None => {}
            }
            let def = self.forward_tool(tool.clone()).renamed(local(&tool.name));
            if let Err(e) = server.add_tool(def).await {
                tracing::warn!(target: "mcp_core::client", "proxying tool {}: {e}", tool.name);
            }
        }
        Ok(())
    }
}

/// The entries of `from` that `to` does not have (a changed entry counts as
/// gone from one side and new on the other).
fn gone<'a, T: PartialEq>(from: &'a [T], to: &'a [T]) -> impl Iterator<Item = &'a T> {
    from.iter().filter(move |e| !to.contains(e))
}

/// A backend entry's name on our server: `prefix_name` under a prefix (as
/// a mount names it), else its own.
fn local_name(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(p) => format!("{p}_{name}"),
        None => name.to_owned(),
    }
}
