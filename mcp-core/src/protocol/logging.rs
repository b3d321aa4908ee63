//! Log levels of `logging/setLevel`, `notifications/message` and the
//! 2026-07-28 `_meta` log level (the syslog severities of RFC 5424).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A log level, least to most severe: the derived order is the severity
/// order, so `level >= threshold` is how messages are filtered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least to most severe.
    pub const ALL: [Self; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The level's wire name (`"debug"` … `"emergency"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    /// The level with this wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The wire names, comma-separated, for error messages.
    pub(crate) fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of [`LoggingLevel::from_str`]: the name is not a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid log level {:?}; expected one of {}",
            self.0,
            LoggingLevel::names()
        )
    }
}

impl std::error::Error for UnknownLevel {}

impl FromStr for LoggingLevel {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Self, UnknownLevel> {
        Self::from_name(s).ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_severity_and_names_round_trip() {
        assert!(LoggingLevel::Debug < LoggingLevel::Emergency);
        assert!(LoggingLevel::Warning > LoggingLevel::Notice);
        for level in LoggingLevel::ALL {
            assert_eq!(level.as_str().parse::<LoggingLevel>(), Ok(level));
        }
        assert!("verbose".parse::<LoggingLevel>().is_err());
    }
}
