//! Chapters on topics that span the API, beyond what one item's docs say.
//!
//! Built with the features they link to (`auth`, `client`, `stdio`); on
//! docs.rs, always.

#[doc = include_str!("trust_boundaries.md")]
pub mod trust_boundaries {}
