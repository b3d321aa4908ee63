use mcp_core::mcp_tool;

/// Too small to hold the note of a cut result.
#[mcp_tool(max_result_bytes = 100)]
async fn tiny() -> String {
    String::new()
}

/// A string where a number goes.
#[mcp_tool(max_result_bytes = "50kb")]
async fn texty() -> String {
    String::new()
}

/// Neither "cut" nor "fail".
#[mcp_tool(result_over_limit = "truncate")]
async fn unknown_mode() -> String {
    String::new()
}

/// No limit, and a limit.
#[mcp_tool(no_result_limit, max_result_bytes = 4096)]
async fn both() -> String {
    String::new()
}

/// "fail" with no byte count: it would replace the server's limit.
#[mcp_tool(result_over_limit = "fail")]
async fn fail_alone() -> String {
    String::new()
}

fn main() {}
