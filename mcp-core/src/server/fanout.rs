//! Notices from the other replicas ([`crate::storage::NotificationBus`]): each is delivered to
//! the listeners of this process as if it had been made here (and is not
//! published again).

use std::sync::{Arc, Weak};

use super::registry::ListKind;
use super::{Inner, McpServer, Pipeline};
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
            runtime.spawn(async move { deliver(&inner.pipeline, event).await });
        }
    })
}

/// Delivers one notice of another replica to the listeners the
/// pipeline's parts hold.
async fn deliver(pipeline: &Pipeline, event: BusEvent) {
    match event {
        BusEvent::ResourceUpdated { uri } => {
            pipeline.features.subscriptions.notify_updated(&uri).await;
        }
        BusEvent::ToolsListChanged => {
            pipeline
                .registry
                .list_listeners
                .changed(ListKind::Tools)
                .await;
        }
        BusEvent::ResourcesListChanged => {
            pipeline
                .registry
                .list_listeners
                .changed(ListKind::Resources)
                .await;
        }
        BusEvent::PromptsListChanged => {
            pipeline
                .registry
                .list_listeners
                .changed(ListKind::Prompts)
                .await;
        }
        BusEvent::TaskChanged { task_id } => {
            if let Some(engine) = &pipeline.extensions.tasks {
                engine.changed_elsewhere(&task_id).await;
            }
        }
    }
}
