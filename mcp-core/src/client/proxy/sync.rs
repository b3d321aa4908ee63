//! Keeping in step with a backend's listings: on the backend's
//! `notifications/{tools,resources,prompts}/list_changed` (a legacy
//! session, or a 2026-07-28 `subscriptions/listen`) and after every TTL,
//! the listings are fetched again (within the byte budget of
//! `listing.rs`), cached on the [`Remote`], and applied to the live parts
//! of the server (`apply.rs`: only to what this backend added); each
//! change of the resources, templates or prompts is also announced on
//! [`Remote::listings_changed`].

use std::sync::PoisonError;
use std::time::Duration;

use serde_json::Value;

use super::apply::Applied;
use super::listing::Listings;
use super::Remote;
use crate::client::{ClientError, RequestOptions};
use crate::protocol::{Prompt, Resource, ResourceTemplate};
use crate::McpServer;

/// The backend notifications that start a refresh.
pub(super) const LIST_CHANGED: [&str; 3] = [
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
];

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

    pub(super) fn listings(&self) -> Listings {
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
    /// change notifications and at least every `ttl` (asked anew each
    /// time, whatever `ttlMs` the backend's listings carry); the resource,
    /// template and prompt listings are refreshed at the same times (see
    /// [`listings_changed`](Self::listings_changed)), and applied to
    /// `server`'s resources and prompts when those are live too
    /// ([`live_catalog`](crate::McpServerBuilder::live_catalog)). Runs
    /// until the returned task is aborted.
    ///
    /// Only this backend's own entries change: a name or URI that another
    /// mount (or the server itself) serves is refused, and stays refused
    /// while the backend lists it, however often it de-lists and lists it
    /// again (it is taken once nobody holds it); a forwarder replaced keeps
    /// the OAuth scopes and required state of the one it replaces. A
    /// refresh whose listings fail or exceed
    /// [`ProxyOptions::max_listing_bytes`](super::ProxyOptions::max_listing_bytes)
    /// changes nothing.
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
            // What `server` serves of this backend's entries now.
            let mut applied = Applied::held(&remote, &server, prefix.as_deref());
            loop {
                if listen.as_ref().is_none_or(|l| l.0.is_finished()) {
                    listen = remote.listen_for_changes().await.map(AbortOnDrop);
                }
                tokio::select! {
                    () = remote.0.tools_changed.notified() => {}
                    () = tokio::time::sleep(ttl) => {}
                }
                if let Err(e) = remote.refresh_with_reconnect().await {
                    tracing::warn!(target: "mcp_core::client", "refreshing the listings of {}: {e}", remote.label());
                }
                // Also after a failed refresh: a name another mount held
                // may be free now.
                let now = remote.listings();
                applied
                    .apply(&remote, &server, prefix.as_deref(), &now)
                    .await;
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
    async fn refresh_with_reconnect(&self) -> Result<(), ClientError> {
        let client = self.client().await?;
        let outcome = self.refresh(&client).await;
        if let Err(e) = &outcome {
            if super::backend_lost(&client, e) {
                self.drop_client(&client);
            }
        }
        outcome
    }

    /// Lists the backend's entries again and keeps them (a listing that
    /// fails or is too large keeps the previous ones). The listings are
    /// asked for anew, whatever the client's cache holds.
    async fn refresh(&self, client: &crate::client::Client) -> Result<(), ClientError> {
        client.forget_listings();
        let listings = Listings::fetch(client, self.0.options.max_listing_bytes).await?;
        let changed = {
            let mut known = self
                .0
                .listings
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let changed = !known.same_entries(&listings);
            *known = listings;
            changed
        };
        if changed {
            self.0.listings_version.send_modify(|v| *v += 1);
        }
        Ok(())
    }
}
