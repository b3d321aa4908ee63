//! Resource templates: variables bound to same-named arguments of any
//! `FromStr` type, plus the invoke context and state.

use std::str::FromStr;

use mcp_core::{mcp_resource, InvokeContext, McpServer, State};

/// A log level.
#[derive(Debug)]
enum Level {
    Info,
    Warn,
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "info" => Ok(Self::Info),
            "warn" => Ok(Self::Warn),
            other => Err(format!("unknown level {other}")),
        }
    }
}

#[derive(Clone)]
struct Root(String);

/// Log lines of one day at one level.
#[mcp_resource(uri = "logs://{day}/{level}", mime_type = "text/plain")]
async fn day_log(level: Level, day: u32, ctx: &InvokeContext) -> String {
    format!("day {day} at {level:?} ({})", ctx.is_cancelled())
}

/// A file under the root; `{+path}` may contain slashes.
#[mcp_resource(uri = "file:///{+path}")]
fn file(State(root): State<Root>, path: String) -> String {
    format!("{}/{path}", root.0)
}

fn main() {
    assert!(day_log::resource().is_template());
    let _ = (Level::Info, Level::Warn);
    let server = McpServer::builder()
        .resource(day_log::resource())
        .resource(file::resource())
        .state(Root("/srv".into()))
        .build()
        .expect("valid server");
    let _ = server;
}
