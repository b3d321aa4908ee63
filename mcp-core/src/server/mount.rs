//! Composition: [`McpServerBuilder::mount`] serves another server's
//! catalog under a prefix (its interceptors for its own entries are kept
//! in `mount_chains.rs` and the server's `tool_chains`).

use std::collections::HashMap;
use std::sync::Arc;

use super::builder::{BuildError, McpServerBuilder};
use super::intercept::{Interceptor, Operation};
use super::mount_chains::EntryInterceptors;
use crate::handler::transforms::{self, Transformed};
use crate::handler::{ToolTransforms, TransformProblem};

impl McpServerBuilder {
    /// Mounts another server's catalog into this one under `prefix`: its
    /// tools and prompts are served as `{prefix}_{name}`, its resources and
    /// templates under their own URIs (a URI both servers have is a
    /// [`BuildError::DuplicateResource`]); a prefix that could collide with
    /// another mount's (one followed by `_` starts the other followed by
    /// `_`: equal, or `conf` and `conf_test`) is a
    /// [`BuildError::MountPrefixCollision`]. Its state is added where this
    /// server has none of that type, and its interceptors run for its
    /// tools (`tools/call`), resources (`resources/read`) and prompts
    /// (`prompts/get`), inside this server's (which apply to mounted
    /// entries like to any other): onion order, this server's outermost.
    /// Extensions attached by this server's interceptors reach the mounted
    /// handlers. (The mounted server's completer, logging and
    /// server info are not carried over; its interceptors do not run for
    /// the merged listings, such as `prompts/list`.) To rename, hide or
    /// re-describe the mounted tools, or set their arguments, use
    /// [`mount_with`](Self::mount_with).
    ///
    /// ```
    /// use mcp_core::{McpServer, McpToolDef};
    ///
    /// let weather = McpServer::builder().tool(McpToolDef::new(
    ///     "forecast", "Tomorrow's weather", serde_json::json!({"type": "object"}),
    ///     |_args, _ctx: mcp_core::InvokeContext| async { "sunny" },
    /// ));
    /// let server = McpServer::builder().mount("weather", weather).build().expect("builds");
    /// assert_eq!(server.list_tools()[0].name, "weather_forecast");
    /// ```
    pub fn mount(self, prefix: &str, child: McpServerBuilder) -> Self {
        self.mount_with(prefix, child, ToolTransforms::new())
    }

    /// [`mount`](Self::mount), with the mounted tools adapted by
    /// `transforms` (renamed, hidden, re-described, their arguments given
    /// defaults, fixed values or new names; see [`ToolTransforms`]), which
    /// name tools and arguments as `child` lists them, before the prefix.
    /// The mounted server's interceptors still run for its tools, under
    /// their new names; the tool gets the caller's arguments rewritten
    /// back, before its own argument check. The arguments of a tool that
    /// the mounted server's interceptors run for are not transformed
    /// (those interceptors would check the caller's arguments, not the
    /// tool's), nor is anything of a tool forwarded from a proxied backend
    /// (its refreshes would undo it: use `ProxyOptions::transforms`).
    ///
    /// A transform that cannot be applied (a tool or argument `child` does
    /// not have, a rename onto a taken name, a value that does not fit the
    /// argument's schema, either case above) is a
    /// [`BuildError::MountTransform`] listing every problem.
    ///
    /// ```
    /// use mcp_core::{handler::ToolTransforms, McpServer, McpToolDef};
    /// use serde_json::json;
    ///
    /// let weather = McpServer::builder().tool(McpToolDef::new(
    ///     "forecast", "Tomorrow's weather",
    ///     json!({"type": "object", "properties": {"city": {"type": "string"}},
    ///            "required": ["city"]}),
    ///     |_args, _ctx: mcp_core::InvokeContext| async { "sunny" },
    /// ));
    /// let transforms = ToolTransforms::new()
    ///     .rename("forecast", "tomorrow")
    ///     .default("forecast", "city", json!("Lisbon"));
    /// let server = McpServer::builder()
    ///     .mount_with("weather", weather, transforms)
    ///     .build()
    ///     .expect("builds");
    /// let tool = &server.list_tools()[0];
    /// assert_eq!(tool.name, "weather_tomorrow");
    /// assert_eq!(tool.input_schema.get("required"), None);
    /// ```
    pub fn mount_with(
        mut self,
        prefix: &str,
        mut child: McpServerBuilder,
        transforms: ToolTransforms,
    ) -> Self {
        let valid = (1..=64).contains(&prefix.len())
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        if !valid {
            self.deferred
                .get_or_insert(BuildError::InvalidMountPrefix(prefix.to_owned()));
            return self;
        }
        if let Some(e) = child.deferred.take() {
            self.deferred.get_or_insert(e);
        }
        let under = |p: &str| format!("{p}_");
        let new = under(prefix);
        if let Some(taken) = self.mount_prefixes.iter().find(|taken| {
            let taken = under(taken);
            taken.starts_with(&new) || new.starts_with(&taken)
        }) {
            self.deferred
                .get_or_insert(BuildError::MountPrefixCollision {
                    first: taken.clone(),
                    second: prefix.to_owned(),
                });
            return self;
        }
        // What the child mounted in turn is named under `prefix_`: a prefix
        // that collides with one of those collides with `prefix` too.
        self.mount_prefixes.push(prefix.to_owned());
        let named = |name: &str| format!("{prefix}_{name}");
        let mut problems = refused(&transforms, &child);
        let Transformed {
            tools,
            problems: more,
        } = transforms::apply(&transforms, child.tools);
        problems.extend(more);
        if !problems.is_empty() {
            self.deferred.get_or_insert(BuildError::MountTransform {
                prefix: prefix.to_owned(),
                problems,
            });
            return self;
        }
        // The child's name of each tool → the name it is served under.
        let mut served = HashMap::with_capacity(tools.len());
        for (own, tool) in tools {
            let name = named(tool.name());
            for interceptor in &child.interceptors {
                self.tool_interceptors
                    .push((name.clone(), Arc::clone(interceptor)));
            }
            served.insert(own, name.clone());
            self.tools.push(tool.renamed(name));
        }
        // A hidden tool's own interceptors go with it; one for a tool the
        // child does not have stays, and fails the build as unknown.
        for (tool, interceptor) in child.tool_interceptors {
            let name = match served.get(&tool) {
                Some(name) => name.clone(),
                None if transforms.hides(&tool) => continue,
                None => named(&tool),
            };
            self.tool_interceptors.push((name, interceptor));
        }
        let parent = &mut self.entry_interceptors;
        for prompt in child.prompts {
            let name = named(prompt.name());
            for interceptor in &child.interceptors {
                parent.prompts.push((name.clone(), Arc::clone(interceptor)));
            }
            self.prompts.push(prompt.renamed(name));
        }
        for resource in child.resources {
            for interceptor in &child.interceptors {
                let key = resource.key().to_owned();
                parent.resources.push((key, Arc::clone(interceptor)));
            }
            self.resources.push(resource);
        }
        // What the child mounted in turn keeps its own interceptors, inside.
        let EntryInterceptors { resources, prompts } = child.entry_interceptors;
        parent.resources.extend(resources);
        let prompts = prompts.into_iter().map(|(name, i)| (named(&name), i));
        parent.prompts.extend(prompts);
        self.state.absorb(child.state);
        self.state_types.extend(child.state_types);
        self
    }
}

/// The transforms a mount refuses before applying them: any transform of
/// a tool forwarded from a proxied backend (its refreshes would undo it),
/// and argument transforms of a tool the child's own interceptors run
/// for (they would see the caller's arguments, not the tool's: a check of
/// `path` passes a call that sends it as `file`).
fn refused(transforms: &ToolTransforms, child: &McpServerBuilder) -> Vec<TransformProblem> {
    let calls = |i: &Arc<dyn Interceptor>| i.operations().contains(Operation::CallTool);
    let every_tool = child.interceptors.iter().any(calls);
    let mut problems = Vec::new();
    for (name, edit) in &transforms.tools {
        let Some(tool) = child.tools.iter().find(|t| t.name() == name) else {
            continue;
        };
        if tool.owner.is_some() {
            problems.push(TransformProblem::Proxied(name.clone()));
            continue;
        }
        let Some((argument, _)) = edit.args.first() else {
            continue;
        };
        let own = child.tool_interceptors.iter();
        if every_tool || own.filter(|(t, _)| t == name).any(|(_, i)| calls(i)) {
            problems.push(TransformProblem::Conflict {
                tool: name.clone(),
                argument: argument.clone(),
                reason: "the mounted server's interceptors for this tool would see the \
                         arguments as the caller sends them, not as the tool gets them: \
                         transform only its name and description, or mount a server \
                         without interceptors for it"
                    .into(),
            });
        }
    }
    problems
}
