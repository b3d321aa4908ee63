use mcp_core::mcp_resource;

struct Day(u32);

/// Log lines of one day.
#[mcp_resource(uri = "logs://{day}")]
async fn day_log(day: Day) -> String {
    format!("day {}", day.0)
}

fn main() {
    let _ = day_log::resource();
}
