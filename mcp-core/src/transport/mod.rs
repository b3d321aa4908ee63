//! Transports: thin loops that read messages, call the dispatcher and write replies.

#[cfg(feature = "stdio")]
pub mod stdio;

#[cfg(feature = "http")]
pub mod http;
