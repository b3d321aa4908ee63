use mcp_core::mcp_resource;

/// Log lines of one day.
#[mcp_resource(uri = "logs://{day}")]
async fn day_log(day: u32, level: String) -> String {
    format!("day {day} at {level}")
}

fn main() {
    let _ = day_log::resource();
}
