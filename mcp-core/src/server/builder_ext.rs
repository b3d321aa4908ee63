//! The builder methods of the extensions (tasks, skills); their settings
//! and what `build` makes of them are in `offered_extensions.rs`.

use std::sync::Arc;

use super::builder::{BuildError, McpServerBuilder};

impl McpServerBuilder {
    /// Keeps this server's shared state in `storage` (see
    /// [`crate::storage`]): where tasks live, how notices reach the other
    /// replicas, where legacy HTTP sessions are shared. Default
    /// [`Storage::memory`](crate::storage::Storage::memory): everything in
    /// this process. With a task store the tasks extension is offered even
    /// when no tool supports tasks.
    ///
    /// ```
    /// use mcp_core::storage::Storage;
    /// use mcp_core::tasks::InMemoryTaskStore;
    /// use mcp_core::McpServer;
    ///
    /// let server = McpServer::builder()
    ///     .server_info("jobs", "1.0.0")
    ///     .storage(Storage::memory().with_tasks(InMemoryTaskStore::new(1_000)))
    ///     .build()
    ///     .expect("valid server");
    /// # let _ = server;
    /// ```
    pub fn storage(mut self, storage: crate::storage::Storage) -> Self {
        self.ext.storage = storage;
        self
    }

    /// How long per-principal state ([`crate::state`]: the values behind
    /// handles and [`PrincipalState`](crate::state::PrincipalState)) may
    /// stay unused before it expires; default one hour
    /// ([`StateLimits::DEFAULT`](crate::storage::StateLimits::DEFAULT)).
    /// Every read or write starts the idle time again. At least 1 ms.
    pub fn state_ttl(mut self, idle: std::time::Duration) -> Self {
        self.ext.state_limits.idle_ttl = idle.max(std::time::Duration::from_millis(1));
        self
    }

    /// How many bytes of per-principal state one principal may hold
    /// (each value's JSON, its kind and its id, over all its handles and
    /// principal-keyed state); default 1 MiB
    /// ([`StateLimits::DEFAULT`](crate::storage::StateLimits::DEFAULT)). A
    /// write past it fails with `STATE_FULL`.
    pub fn state_byte_cap(mut self, bytes: usize) -> Self {
        self.ext.state_limits.max_bytes_per_principal = bytes;
        self
    }

    /// The bounds of the tasks extension (TTL, polling hint, running tasks
    /// per principal, sizes); default [`TaskLimits::DEFAULT`](crate::tasks::TaskLimits::DEFAULT).
    pub fn task_limits(mut self, limits: crate::tasks::TaskLimits) -> Self {
        self.ext.task_limits = Some(limits);
        self
    }

    /// Runs each new task in another process instead of this one: once the
    /// task is stored, `spawn(task_id)` is called (and the tool's first
    /// poll here is dropped); that process serves the same tools and calls
    /// [`McpServer::run_task`](crate::McpServer::run_task) with the id. For servers whose process ends
    /// with the request that created the task (a stdio server started per
    /// request); the store must be shared (a
    /// [`FileTaskStore`](crate::tasks::FileTaskStore), say). The tool then
    /// runs again from its start there, as on a round-trip retry.
    pub fn task_spawner(mut self, spawn: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.ext.task_spawner = Some(Arc::new(spawn));
        self
    }

    /// Publishes a skill (the skills extension,
    /// `io.modelcontextprotocol/skills`): its files become resources under
    /// `skill://<skill-path>/`, and `skills/list`, `skills/get` and
    /// `resources/directory/read` serve its entry and directories.
    pub fn skill(mut self, skill: crate::skills::Skill) -> Self {
        self.ext.skills.push(skill);
        self
    }

    /// Publishes every skill under `root`: each directory holding a
    /// `SKILL.md` (see [`Skill::from_dir`](crate::skills::Skill::from_dir)).
    /// The directory is read here; a problem is reported by
    /// [`build`](Self::build) as [`BuildError::InvalidSkill`].
    pub fn skills_dir(mut self, root: impl AsRef<std::path::Path>) -> Self {
        match crate::skills::skills_under(root.as_ref()) {
            Ok(skills) => self.ext.skills.extend(skills),
            Err(e) => {
                self.deferred.get_or_insert(BuildError::InvalidSkill(e.0));
            }
        }
        self
    }

    /// Serves an MCP Apps view ([`crate::apps`]): a `ui://` resource of
    /// type `text/html;profile=mcp-app` with its `_meta.ui`, in the
    /// resource registry like any other resource (a mounted server's views
    /// come along with its resources). The server then declares the apps
    /// extension. A URI that is not `ui://` or a CSP entry that is not an
    /// origin is reported by [`build`](Self::build) as
    /// [`BuildError::InvalidApp`].
    pub fn app_view(mut self, view: crate::apps::AppView) -> Self {
        if let Some(why) = view.problem() {
            self.deferred.get_or_insert(BuildError::InvalidApp(why));
            return self;
        }
        self.resources.push(view.into_resource());
        self
    }
}
