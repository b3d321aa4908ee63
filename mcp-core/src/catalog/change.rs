//! One change between two catalogs, and the JSON Pointer segments of its path.

use std::fmt;

/// How a change affects those who depend on the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Breaks a client, a prompt or a cached listing built on the old catalog.
    Breaking,
    /// Safe for existing clients.
    Compatible,
}

/// One change from an old catalog to a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Breaking or compatible.
    pub severity: Severity,
    /// The protocol revisions where the change shows.
    pub revisions: Vec<String>,
    /// A JSON Pointer into the revision's surface.
    pub path: String,
    /// What changed, in words.
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Breaking => "BREAKING  ",
            Severity::Compatible => "compatible",
        };
        write!(
            f,
            "{severity} [{}] {}: {}",
            self.revisions.join(", "),
            self.path,
            self.what
        )
    }
}

/// Escapes one JSON Pointer segment.
pub(crate) fn pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
