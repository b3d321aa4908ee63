//! The backend's tools as [`ProxyOptions::transforms`] adapt them: the
//! forwarders are made from each listing and go through the transforms
//! (the one `apply` of `handler::transforms`, as an in-process mount's),
//! when the proxy is built and again on every refresh; what cannot be
//! applied is logged and kept for [`Remote::transform_problems`].

use std::sync::PoisonError;

use super::{ProxyOptions, Remote};
use crate::handler::transforms::{self, Transformed};
use crate::handler::{ToolTransforms, TransformProblem};
use crate::protocol::Tool;
use crate::McpToolDef;

impl ProxyOptions {
    /// Adapts the backend's tools: renamed, hidden, re-described, their
    /// arguments given defaults, fixed values or new names (see
    /// [`ToolTransforms`]; tools and arguments named as the backend lists
    /// them, before any mount prefix). Applied to every listing, the first
    /// and each refresh ([`Remote::sync_tools`]): a transform that does
    /// not fit the backend's listing (a tool it no longer lists, say) is
    /// logged and reported by [`Remote::transform_problems`], a rename
    /// that would give two tools one name is not made, and a tool whose
    /// argument transforms cannot be applied is not served (so a fixed
    /// argument is never open to callers). The listed schema is the
    /// transformed one; the backend gets the arguments its tool was
    /// written for.
    #[must_use]
    pub fn transforms(mut self, transforms: ToolTransforms) -> Self {
        self.transforms = transforms;
        self
    }
}

impl Remote {
    /// What [`ProxyOptions::transforms`] could not apply to the backend's
    /// last listing (empty: everything applied).
    pub fn transform_problems(&self) -> Vec<TransformProblem> {
        self.0
            .transform_problems
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A forwarder for each of the backend's `tools`, transformed, with the
    /// name the backend gives it; the transforms' problems are kept (and
    /// logged when they differ from the last listing's).
    pub(super) fn forwarders(&self, tools: &[Tool]) -> Vec<(String, McpToolDef)> {
        let defs = tools.iter().map(|t| self.forward_tool(t.clone())).collect();
        let Transformed { tools, problems } = transforms::apply(&self.0.options.transforms, defs);
        let mut known = self
            .0
            .transform_problems
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if *known != problems {
            for problem in &problems {
                tracing::warn!(
                    target: "mcp_core::client",
                    "backend {}: transform not applied: {problem}",
                    self.label()
                );
            }
            *known = problems;
        }
        tools
    }
}
