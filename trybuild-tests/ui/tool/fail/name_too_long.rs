use mcp_core::mcp_tool;

/// Weather.
#[mcp_tool(
    name = "get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weath"
)]
async fn weather() -> String {
    "sunny".to_owned()
}

fn main() {
    let _ = weather::tool();
}
