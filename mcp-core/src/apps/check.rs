//! What `McpServerBuilder::build` checks of the views and the tools that
//! name them, and the capability it then declares.

use serde_json::{Map, Value};

use super::{LEGACY_RESOURCE_URI_KEY, MIME_TYPE, UI_SCHEME};
use crate::handler::resource::{McpResourceDef, ResourceKind};
use crate::handler::tool::McpToolDef;
use crate::protocol::ResourceContents;

/// Whether `r` is a view: a fixed `ui://` resource served as [`MIME_TYPE`]
/// (an [`AppView`](super::AppView), or a resource written by hand the same
/// way).
fn is_view(r: &McpResourceDef) -> Option<&str> {
    match &r.kind {
        ResourceKind::Fixed(res)
            if res.uri.starts_with(UI_SCHEME) && res.mime_type.as_deref() == Some(MIME_TYPE) =>
        {
            Some(res.uri.as_str())
        }
        _ => None,
    }
}

/// Why the view `r` must not reach a host: its `_meta.ui.csp` (on its
/// listing) is not an object of origin lists (see `view::csp_problem`).
/// `None` for a valid view and for any resource that is not a view. The
/// one check of every view: those the builder has (an
/// [`AppView`](super::AppView), a resource written by hand, a mounted or
/// proxied server's) and those a proxied backend adds while serving.
pub(crate) fn view_problem(r: &McpResourceDef) -> Option<String> {
    let uri = is_view(r)?;
    let ResourceKind::Fixed(res) = &r.kind else {
        return None;
    };
    let csp = res.meta.as_ref()?.get("ui")?.get("csp")?;
    let why = super::view::csp_problem(csp)?;
    Some(format!("view `{uri}`: {why}"))
}

/// Why the contents of a `resources/read` must not reach a host: a view
/// among them (served as [`MIME_TYPE`]) whose `_meta.ui.csp` is not an
/// object of origin lists. The contents are the handler's (a view written
/// by hand) or a proxied backend's, made at the read: checked at every
/// read, as the listing's `_meta.ui` is by [`view_problem`].
pub(crate) fn contents_problem(contents: &[ResourceContents]) -> Option<String> {
    contents
        .iter()
        .filter(|c| c.mime_type.as_deref() == Some(MIME_TYPE))
        .find_map(|c| {
            let csp = c.meta.as_ref()?.get("ui")?.get("csp")?;
            let why = super::view::csp_problem(csp)?;
            Some(format!("view `{}`: {why}", c.uri))
        })
}

/// The apps extension's capability (`None`: the server has no view and no
/// tool with `_meta.ui`), or why a view's CSP ([`view_problem`]) or a
/// tool's `_meta.ui` is not valid: it names
/// no view of the server, or its visibility is empty or holds an unknown
/// name. A tool forwarded from a proxied backend (it has an owner) counts
/// for the capability but is not checked.
pub(crate) fn capability(
    tools: &[McpToolDef],
    resources: &[McpResourceDef],
) -> Result<Option<Value>, String> {
    if let Some(why) = resources.iter().find_map(view_problem) {
        return Err(why);
    }
    let views: Vec<&str> = resources.iter().filter_map(is_view).collect();
    let mut linked = false;
    for t in tools {
        let Some(meta) = &t.tool().meta else {
            continue;
        };
        let ui = meta.get("ui");
        let legacy = meta.get(LEGACY_RESOURCE_URI_KEY);
        if ui.is_none() && legacy.is_none() {
            continue;
        }
        linked = true;
        if t.owner.is_some() {
            // Forwarded from a proxied backend: its views are the backend's
            // to serve (and to check); a listing that does not show them
            // must not stop this server from starting.
            continue;
        }
        let name = t.name();
        let ui = match ui {
            Some(Value::Object(ui)) => Some(ui),
            Some(_) => return Err(format!("tool `{name}`: `_meta.ui` must be an object")),
            None => None,
        };
        let uris = [ui.and_then(|ui| ui.get("resourceUri")), legacy];
        for uri in uris.into_iter().flatten() {
            let Some(uri) = uri.as_str() else {
                return Err(format!("tool `{name}`: its view URI must be a string"));
            };
            if !views.contains(&uri) {
                return Err(format!(
                    "tool `{name}` names the view `{uri}`, but the server has no such view: add it with McpServerBuilder::app_view (a `ui://` resource served as {MIME_TYPE})"
                ));
            }
        }
        if let Some(visibility) = ui.and_then(|ui| ui.get("visibility")) {
            let list = visibility.as_array().filter(|l| !l.is_empty());
            let Some(list) = list else {
                return Err(format!(
                    "tool `{name}`: `_meta.ui.visibility` must list who may call it (\"model\", \"app\" or both); leave it out for both"
                ));
            };
            if let Some(bad) = list.iter().find(|v| *v != "model" && *v != "app") {
                return Err(format!(
                    "tool `{name}`: `_meta.ui.visibility` holds {bad}; the names are \"model\" and \"app\""
                ));
            }
        }
    }
    if views.is_empty() && !linked {
        return Ok(None);
    }
    let mut cap = Map::new();
    cap.insert("mimeTypes".into(), Value::from(vec![MIME_TYPE]));
    Ok(Some(Value::Object(cap)))
}
