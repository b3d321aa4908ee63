//! What the catalog's checks and readers report when they fail.

use std::fmt;

/// Why a catalog check or read failed. Each variant carries the full,
/// human-readable report ([`Display`](fmt::Display) prints it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogError {
    /// The catalog differs from its lockfile.
    Drifted(String),
    /// No lockfile at the path.
    Missing(String),
    /// The lockfile could not be read or parsed.
    Unreadable(String),
    /// Writing the lockfile (`MCP_CATALOG=overwrite`) failed.
    Write(String),
    /// A JSON document that is not a catalog lockfile of this format.
    Format(String),
    /// The tool listing costs more tokens than the budget.
    OverBudget(String),
    /// Reading the catalog from a server failed (a refused revision or a
    /// failed listing).
    Listing(String),
}

impl CatalogError {
    /// The report's text.
    pub fn message(&self) -> &str {
        match self {
            Self::Drifted(m)
            | Self::Missing(m)
            | Self::Unreadable(m)
            | Self::Write(m)
            | Self::Format(m)
            | Self::OverBudget(m)
            | Self::Listing(m) => m,
        }
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for CatalogError {}
