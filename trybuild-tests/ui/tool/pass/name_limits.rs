//! Tool names at the limits of the spec: 128 characters, and every allowed
//! character class.

use mcp_core::mcp_tool;

/// The longest allowed name.
#[mcp_tool(
    name = "get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weather_get_weat"
)]
fn longest() {}

/// Every allowed character.
#[mcp_tool(name = "Az09_-.")]
fn charset() {}

/// A one-character name.
#[mcp_tool(name = "x")]
fn x() {}

fn main() {
    assert_eq!(longest::tool().name().len(), 128);
    assert_eq!(charset::tool().name(), "Az09_-.");
    assert_eq!(x::tool().name(), "x");
}
