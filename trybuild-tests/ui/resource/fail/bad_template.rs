use mcp_core::mcp_resource;

/// Log lines of one day.
#[mcp_resource(uri = "logs://{day")]
async fn day_log(day: u32) -> String {
    format!("day {day}")
}

fn main() {
    let _ = day_log::resource();
}
