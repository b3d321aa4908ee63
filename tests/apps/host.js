// The host side of MCP Apps in the test page, on the official AppBridge of
// @modelcontextprotocol/ext-apps: renders a view's HTML in a sandboxed
// iframe under the CSP its `_meta.ui` declares, sends it the tool's input
// and result, and passes its `tools/call` requests to the MCP client in
// node (`window.hostCallTool`, exposed by run.mjs through Playwright).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

/** A CSP source list from declared origins, or `fallback` when none. */
function sources(list, fallback) {
  return Array.isArray(list) && list.length > 0 ? list.join(" ") : fallback;
}

/**
 * The Content Security Policy a host builds from `_meta.ui.csp`: nothing
 * from the network unless declared; inline scripts and styles (the view is
 * one HTML document) and data: images.
 */
export function policyOf(csp = {}) {
  const resources = sources(csp.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src ${sources(csp.resourceDomains, "'none'")}`,
    `media-src ${sources(csp.resourceDomains, "'none'")}`,
    `connect-src ${sources(csp.connectDomains, "'none'")}`,
    `frame-src ${sources(csp.frameDomains, "'none'")}`,
    `base-uri ${sources(csp.baseUriDomains, "'none'")}`,
  ].join("; ");
}

/** `html` with the policy as the first element of its head. */
function withPolicy(html, policy) {
  const escaped = policy.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escaped}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) {
    const at = head.index + head[0].length;
    return html.slice(0, at) + meta + html.slice(at);
  }
  return meta + html;
}

/**
 * Renders one view: `{id, html, ui, input, result}` (`ui` is the read
 * contents' `_meta.ui`). Resolves with the policy once the view has
 * initialized and been sent the tool's input and result (with `noWait`,
 * once its HTML is set).
 */
window.renderView = async ({ id, html, ui, input, result, noWait }) => {
  const policy = policyOf(ui && ui.csp);
  const iframe = document.createElement("iframe");
  iframe.id = id;
  // No allow-same-origin: the view runs in an opaque origin, apart from
  // the host page.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.width = "520px";
  iframe.style.height = "320px";
  iframe.style.border = ui && ui.prefersBorder ? "1px solid #888" : "none";
  document.getElementById("views").append(iframe);

  const bridge = new AppBridge(
    null,
    { name: "mcp-core apps test host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline" } },
  );
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = async () => {
      await bridge.sendToolInput({ arguments: input });
      await bridge.sendToolResult(result);
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withPolicy(html, policy);
  if (!noWait) await initialized;
  return policy;
};

window.hostReady = true;
