//! Forwarders for the backend's resources, resource templates and
//! prompts: each read or get goes to the backend for our caller, with
//! its questions relayed and its errors kept.

use serde_json::{json, Map, Value};

use super::Remote;
use crate::client::ClientError;
use crate::context::InvokeContext;
use crate::protocol::{Prompt, Resource, ResourceTemplate};
use crate::{
    handler::{PromptArgs, ResourceRequest},
    McpPromptDef, McpResourceDef,
};

impl Remote {
    /// A forwarder for the backend's resource (requiring the
    /// [`ProxyOptions::scopes`](super::ProxyOptions::scopes)).
    pub fn forward_resource(&self, resource: Resource) -> McpResourceDef {
        let remote = self.clone();
        let mut def = McpResourceDef::new(
            resource.uri.clone(),
            resource.name.clone(),
            move |req: ResourceRequest, ctx: InvokeContext| {
                let remote = remote.clone();
                async move { remote.read(&req.uri, &ctx).await }
            },
        );
        if let Some(d) = resource.description {
            def = def.with_description(d);
        }
        if let Some(m) = resource.mime_type {
            def = def.with_mime_type(m);
        }
        if let Some(t) = resource.title {
            def = def.with_title(t);
        }
        def = def.with_scopes(self.0.options.scopes.iter().cloned());
        def.owner = Some(self.0.owner.clone());
        def
    }

    /// A forwarder for the backend's resource template (requiring the
    /// [`ProxyOptions::scopes`](super::ProxyOptions::scopes)).
    pub fn forward_template(&self, template: ResourceTemplate) -> McpResourceDef {
        let remote = self.clone();
        let mut def = McpResourceDef::template(
            template.uri_template.clone(),
            template.name.clone(),
            move |req: ResourceRequest, ctx: InvokeContext| {
                let remote = remote.clone();
                async move { remote.read(&req.uri, &ctx).await }
            },
        );
        if let Some(d) = template.description {
            def = def.with_description(d);
        }
        if let Some(m) = template.mime_type {
            def = def.with_mime_type(m);
        }
        def = def.with_scopes(self.0.options.scopes.iter().cloned());
        def.owner = Some(self.0.owner.clone());
        def
    }

    async fn read(
        &self,
        uri: &str,
        ctx: &InvokeContext,
    ) -> Result<Vec<crate::protocol::ResourceContents>, crate::protocol::ErrorObject> {
        let client = self.client().await.map_err(|e| self.error(&e))?;
        let options = self.options_for(ctx);
        match client
            .request("resources/read", json!({ "uri": uri }), &options)
            .await
        {
            Ok(mut result) => {
                let contents = result
                    .get_mut("contents")
                    .map(Value::take)
                    .unwrap_or(Value::Null);
                serde_json::from_value(contents).map_err(|e| self.error(&ClientError::protocol(e)))
            }
            Err(ClientError::Rpc(e)) => Err(e),
            Err(e) => {
                self.drop_client(&client);
                Err(self.error(&e))
            }
        }
    }

    /// A forwarder for the backend's prompt (requiring the
    /// [`ProxyOptions::scopes`](super::ProxyOptions::scopes)).
    pub fn forward_prompt(&self, prompt: Prompt) -> McpPromptDef {
        let remote = self.clone();
        let name = prompt.name.clone();
        let mut def = McpPromptDef::new(
            prompt.name.clone(),
            move |args: PromptArgs, ctx: InvokeContext| {
                let remote = remote.clone();
                let name = name.clone();
                async move {
                    let client = remote.client().await.map_err(|e| remote.error(&e))?;
                    let arguments: Map<String, Value> = args
                        .into_iter()
                        .map(|(k, v)| (k, Value::String(v)))
                        .collect();
                    let options = remote.options_for(&ctx);
                    let result = client
                        .request(
                            "prompts/get",
                            json!({"name": name, "arguments": arguments}),
                            &options,
                        )
                        .await
                        .map_err(|e| match e {
                            ClientError::Rpc(e) => e,
                            other => remote.error(&other),
                        })?;
                    let mut result = result;
                    if let Value::Object(m) = &mut result {
                        m.remove("resultType");
                    }
                    serde_json::from_value::<crate::protocol::GetPromptResult>(result)
                        .map_err(|e| remote.error(&ClientError::protocol(e)))
                }
            },
        );
        if let Some(d) = prompt.description {
            def = def.with_description(d);
        }
        if let Some(a) = prompt.arguments {
            def = def.with_arguments(a);
        }
        def = def.with_scopes(self.0.options.scopes.iter().cloned());
        def.owner = Some(self.0.owner.clone());
        def
    }

    fn error(&self, e: &ClientError) -> crate::protocol::ErrorObject {
        crate::protocol::ErrorObject::new(
            crate::protocol::ErrorCode::INTERNAL_ERROR,
            format!("backend {}: {e}", self.0.label),
        )
    }
}
