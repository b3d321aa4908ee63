//! Notices from the other replicas ([`crate::storage::NotificationBus`]): each is delivered to
//! the listeners of this process as if it had been made here (and is not
//! published again).

use std::sync::{Arc, Weak};

use super::registry::ListKind;
use super::{Inner, McpServer};
use crate::storage::{BusEvent, BusSink};

/// Installs this server's sink on its bus, when it has one. The sink holds
/// the server weakly: a dropped server takes no more notices.
pub(super) fn attach(server: &McpServer) {
    if let Some(bus) = server.inner.storage.notices() {
        bus.attach(sink(Arc::downgrade(&server.inner)));
    }
}

fn sink(server: Weak<Inner>) -> BusSink {
    Arc::new(move |event: BusEvent| {
        let Some(inner) = server.upgrade() else {
            return;
        };
        // Called from the bus's task, on a runtime: delivery may wait on
        // slow listeners, so it runs apart.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(deliver(McpServer { inner }, event));
        }
    })
}

/// Delivers one notice of another replica here.
async fn deliver(server: McpServer, event: BusEvent) {
    match event {
        BusEvent::ResourceUpdated { uri } => {
            server
                .inner
                .pipeline
                .features
                .subscriptions
                .notify_updated(&uri)
                .await;
        }
        BusEvent::ToolsListChanged => {
            server
                .inner
                .pipeline
                .registry
                .list_listeners
                .changed(ListKind::Tools)
                .await;
        }
        BusEvent::ResourcesListChanged => {
            server
                .inner
                .pipeline
                .registry
                .list_listeners
                .changed(ListKind::Resources)
                .await;
        }
        BusEvent::PromptsListChanged => {
            server
                .inner
                .pipeline
                .registry
                .list_listeners
                .changed(ListKind::Prompts)
                .await;
        }
        BusEvent::TaskChanged { task_id } => {
            if let Some(engine) = &server.inner.pipeline.extensions.tasks {
                engine.changed_elsewhere(&task_id).await;
            }
        }
    }
}
