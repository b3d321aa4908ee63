//! Fetching a backend's listings within a byte budget: its tools,
//! resources, resource templates and prompts, every page of each, count
//! against one total ([`ProxyOptions::max_listing_bytes`](super::ProxyOptions::max_listing_bytes)),
//! so a backend cannot make the proxy hold a listing of any size by
//! spreading it over many pages. A fetch that goes over fails whole: what
//! was fetched before (and the catalog made of it) stays.

use serde::de::DeserializeOwned;

use crate::client::{Client, ClientError};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

/// Default of [`ProxyOptions::max_listing_bytes`](super::ProxyOptions::max_listing_bytes):
/// 8 MiB of JSON for all of a backend's listings together. A catalog of a
/// few thousand richly described tools is well under 1 MiB, so this leaves
/// ample room while bounding what one backend makes the proxy hold.
pub const DEFAULT_MAX_LISTING_BYTES: usize = 8 * 1024 * 1024;

/// A backend's tools, resources, resource templates and prompts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Listings {
    pub(super) tools: Vec<Tool>,
    pub(super) resources: Vec<Resource>,
    pub(super) templates: Vec<ResourceTemplate>,
    pub(super) prompts: Vec<Prompt>,
}

impl Listings {
    /// Lists what the backend's capabilities say it has, all pages, within
    /// `limit` bytes of JSON in total.
    ///
    /// # Errors
    /// A listing fails or is malformed, or the listings together exceed
    /// `limit`.
    pub(super) async fn fetch(client: &Client, limit: usize) -> Result<Self, ClientError> {
        let offers = |kind: &str| {
            client
                .server_capabilities()
                .is_some_and(|c| c.get(kind).is_some())
        };
        let mut budget = Budget { left: limit, limit };
        let mut listings = Self::default();
        if offers("tools") {
            let tools = budget.list_all(client, "tools/list", "tools").await?;
            listings.tools = client.callable_tools(tools);
        }
        if offers("resources") {
            listings.resources = budget
                .list_all(client, "resources/list", "resources")
                .await?;
            listings.templates = budget
                .list_all(client, "resources/templates/list", "resourceTemplates")
                .await?;
        }
        if offers("prompts") {
            listings.prompts = budget.list_all(client, "prompts/list", "prompts").await?;
        }
        Ok(listings)
    }

    /// The same resources, templates and prompts (tools aside).
    pub(super) fn same_entries(&self, other: &Self) -> bool {
        self.resources == other.resources
            && self.templates == other.templates
            && self.prompts == other.prompts
    }
}

/// The bytes of listing JSON still allowed in one fetch.
struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// Every item of the paginated listing `method` (its array `key`),
    /// each page's JSON counted against the budget before it is read.
    async fn list_all<T: DeserializeOwned>(
        &mut self,
        client: &Client,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, ClientError> {
        let limit = self.limit;
        let left = &mut self.left;
        client
            .list_pages(method, key, |size| {
                *left = left.checked_sub(size).ok_or_else(|| {
                    ClientError::protocol(format!(
                        "{method}: the backend's listings exceed {limit} bytes of JSON in total (ProxyOptions::max_listing_bytes); the previous listings are kept"
                    ))
                })?;
                Ok(())
            })
            .await
    }
}
