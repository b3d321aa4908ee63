//! The gateway's access rule: who may call what. Kept free of the rest of
//! the example (std only) so it reads on its own — and so tests can check
//! the very code the gateway runs.
//!
//! Two habits it teaches:
//! - **Deny by default.** Roles are parsed into a known set; a missing,
//!   empty, unknown or differently spelled role is the least privilege,
//!   never a writer. Writes are granted role by role.
//! - **Judge a tool by where it comes from, never by a local name.** A
//!   proxied tool's name is made up by its mount (`NAME_` + the backend's
//!   own name), so it can equal a local read-only tool's name while doing
//!   something else entirely; its annotations are another server's word.
//!   A proxied tool is read-only for the gateway only when the gateway's
//!   own configuration says so.

use std::collections::HashSet;

/// The caller's role, from the principal the transport supplied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// May call every tool.
    Admin,
    /// May call read-only tools only. Also what every unknown role is.
    Viewer,
}

impl Role {
    /// The role a principal names. Only the exact names `admin` and
    /// `viewer` are known; anything else (missing, empty, `Viewer`, `guest`,
    /// …) is [`Role::Viewer`], the least privilege.
    pub fn parse(principal: Option<&str>) -> Self {
        match principal {
            Some("admin") => Self::Admin,
            _ => Self::Viewer,
        }
    }

    /// True for roles explicitly granted writes.
    pub fn may_write(self) -> bool {
        matches!(self, Self::Admin)
    }
}

/// Where the gateway's tools come from, and which of them are read-only.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Local tools annotated read-only (every toolset, enabled or not).
    pub local_read_only: HashSet<String>,
    /// The names proxied backends are mounted under: their tools are
    /// `NAME_*`.
    pub mounts: Vec<String>,
    /// Proxied tools the gateway's configuration vouches are read-only
    /// (`--viewer-tool NAME`); no proxied tool is otherwise.
    pub proxied_read_only: HashSet<String>,
}

impl Policy {
    /// True when `tool` is (or would be) served from a mounted backend: its
    /// name starts with a mount's `NAME_`. Decided by the mount alone, so a
    /// backend cannot slip a tool under a local name, and a tool it adds
    /// later is judged the same way.
    pub fn is_proxied(&self, tool: &str) -> bool {
        self.mounts.iter().any(|mount| {
            tool.strip_prefix(mount.as_str())
                .is_some_and(|rest| rest.starts_with('_'))
        })
    }

    /// True when the gateway treats `tool` as read-only: a proxied tool only
    /// when configured so, a local one when its own annotations say so.
    pub fn is_read_only(&self, tool: &str) -> bool {
        if self.is_proxied(tool) {
            self.proxied_read_only.contains(tool)
        } else {
            self.local_read_only.contains(tool)
        }
    }

    /// True when a caller of `role` may call `tool`.
    pub fn may_call(&self, role: Role, tool: &str) -> bool {
        role.may_write() || self.is_read_only(tool)
    }
}
