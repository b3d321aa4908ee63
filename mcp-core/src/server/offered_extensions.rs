//! The extensions a server may offer (tasks, skills, apps): their settings (set
//! through the builder methods in `builder_ext.rs`), and what
//! [`McpServerBuilder::build`](crate::McpServerBuilder::build) makes of them.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::skills::SkillCatalog;
use super::task_engine::{TaskEngine, TaskSpawner};
use crate::handler::resource::McpResourceDef;
use crate::handler::tool::McpToolDef;

/// What the builder was told about the extensions.
#[derive(Default)]
pub(crate) struct ExtensionConfig {
    pub(super) storage: crate::storage::Storage,
    pub(super) task_limits: Option<crate::tasks::TaskLimits>,
    pub(super) task_spawner: Option<TaskSpawner>,
    pub(super) skills: Vec<crate::skills::Skill>,
    /// The bounds of per-principal state (`state_ttl`, `state_byte_cap`).
    pub(super) state_limits: crate::storage::StateLimits,
}

/// The extensions of a built server.
pub(super) struct Built {
    /// The tasks extension: offered when a store was set or a tool
    /// supports tasks.
    pub(super) tasks: Option<Arc<TaskEngine>>,
    /// The skills extension: offered when there are skills.
    pub(super) skills: Option<Arc<SkillCatalog>>,
    /// The resources serving the skills' files.
    pub(super) resources: Vec<McpResourceDef>,
    /// `{"extensions": {...}}` for the capabilities (empty without any).
    pub(super) capabilities: Map<String, Value>,
    /// Where the server keeps its shared state.
    pub(super) storage: crate::storage::Storage,
    /// The bounds of per-principal state.
    pub(super) state_limits: crate::storage::StateLimits,
}

impl ExtensionConfig {
    pub(super) fn build(
        self,
        tools: &[McpToolDef],
        resources: &[McpResourceDef],
    ) -> Result<Built, super::BuildError> {
        let apps =
            crate::apps::capability(tools, resources).map_err(super::BuildError::InvalidApp)?;
        let wants_tasks = tools
            .iter()
            .any(|t| t.task_support() != crate::tasks::TaskSupport::Forbidden);
        let store = match self.storage.tasks() {
            Some(store) => Some(Arc::clone(store)),
            None if wants_tasks => Some(Arc::new(crate::tasks::InMemoryTaskStore::default())
                as Arc<dyn crate::storage::TaskStore>),
            None => None,
        };
        let limits = self.task_limits.unwrap_or_default();
        let spawner = self.task_spawner;
        let bus = self.storage.notices().cloned();
        let tasks =
            store.map(|store| Arc::new(TaskEngine::new(store, limits, spawner).with_bus(bus)));
        let skills = (!self.skills.is_empty()).then(|| Arc::new(SkillCatalog::new(&self.skills)));
        let mut extensions = Map::new();
        if tasks.is_some() {
            extensions.insert(
                crate::tasks::TASKS_EXTENSION.into(),
                Value::Object(Map::new()),
            );
        }
        if skills.is_some() {
            extensions.insert(
                crate::skills::SKILLS_EXTENSION.into(),
                SkillCatalog::capability(),
            );
        }
        if let Some(apps) = apps {
            extensions.insert(crate::apps::APPS_EXTENSION.into(), apps);
        }
        let mut capabilities = Map::new();
        if !extensions.is_empty() {
            capabilities.insert("extensions".into(), Value::Object(extensions));
        }
        Ok(Built {
            tasks,
            skills,
            resources: super::skills::resources(&self.skills),
            capabilities,
            storage: self.storage,
            state_limits: self.state_limits,
        })
    }
}

/// The extensions a built server offers.
pub(crate) struct Extensions {
    /// The tasks extension, when offered.
    pub(crate) tasks: Option<Arc<TaskEngine>>,
    /// The skills extension, when skills are published.
    pub(crate) skills: Option<Arc<SkillCatalog>>,
}

#[cfg(test)]
mod tests {
    use crate::apps::ToolUi;
    use crate::handler::tool::McpToolDef;
    use crate::server::registry::Owner;

    fn linked_to_nothing() -> McpToolDef {
        McpToolDef::new(
            "t",
            "d",
            serde_json::json!({"type": "object"}),
            |_args, _ctx: crate::InvokeContext| async { "" },
        )
        .with_ui(ToolUi::new("ui://backend/view.html"))
    }

    #[test]
    fn a_forwarded_tool_with_ui_is_left_to_its_backend() {
        let own = super::ExtensionConfig::default().build(&[linked_to_nothing()], &[]);
        assert!(matches!(own, Err(super::super::BuildError::InvalidApp(_))));
        let mut forwarded = linked_to_nothing();
        forwarded.owner = Some(Owner::new("backend"));
        let built = super::ExtensionConfig::default()
            .build(&[forwarded], &[])
            .unwrap_or_else(|e| panic!("{e}"));
        let extensions = &built.capabilities["extensions"];
        assert!(extensions[crate::apps::APPS_EXTENSION].is_object());
    }
}
