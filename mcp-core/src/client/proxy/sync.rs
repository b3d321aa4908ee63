//! Keeping a live catalog in step with a backend's tools: on the
//! backend's `notifications/tools/list_changed` (a legacy session, or a
//! 2026-07-28 `subscriptions/listen`) and after every TTL, the listing is
//! fetched again and the forwarders added, replaced or removed.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::time::Duration;

use serde_json::{json, Value};

use super::Remote;
use crate::client::{ClientError, RequestOptions};
use crate::protocol::Tool;
use crate::McpServer;

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
    /// Keeps `server`'s tools (it must be built with
    /// [`live_tools`](crate::McpServerBuilder::live_tools)) in step with the
    /// backend's: the forwarders [`builder`](Self::builder) made (renamed
    /// `prefix_name` when mounted under `prefix`) are replaced, added or
    /// removed whenever the backend's listing changes, checked on its
    /// change notifications and at least every `ttl`. Runs until the
    /// returned task is aborted.
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
            loop {
                if listen.as_ref().is_none_or(|l| l.0.is_finished()) {
                    listen = remote.listen_for_changes().await.map(AbortOnDrop);
                }
                tokio::select! {
                    () = remote.0.tools_changed.notified() => {}
                    () = tokio::time::sleep(ttl) => {}
                }
                if let Err(e) = remote.refresh(&server, prefix.as_deref()).await {
                    tracing::warn!(target: "mcp_core::client", "refreshing the tools of {}: {e}", remote.label());
                }
            }
        })
    }

    /// On 2026-07-28 a backend tells of changes only on a listen: hold one
    /// open while the backend offers `tools.listChanged`.
    async fn listen_for_changes(&self) -> Option<tokio::task::JoinHandle<()>> {
        let client = self.client().await.ok()?;
        let offers = client
            .server_capabilities()
            .and_then(|c| c.get("tools"))
            .and_then(|t| t.get("listChanged"))
            .and_then(Value::as_bool)
            == Some(true);
        if !client.is_modern() || !offers {
            return None;
        }
        Some(tokio::spawn(async move {
            let _ = client
                .listen(json!({"toolsListChanged": true}), &RequestOptions::new())
                .await;
        }))
    }

    /// Lists the backend's tools and applies the difference to `server`.
    async fn refresh(&self, server: &McpServer, prefix: Option<&str>) -> Result<(), ClientError> {
        let client = self.client().await?;
        let fresh = client.list_tools().await?;
        let old: HashMap<String, Tool> = {
            let mut known = self.0.tools.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *known, fresh.clone())
                .into_iter()
                .map(|t| (t.name.clone(), t))
                .collect()
        };
        let local = |name: &str| match prefix {
            Some(p) => format!("{p}_{name}"),
            None => name.to_owned(),
        };
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
