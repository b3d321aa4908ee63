// The MCP Apps browser test (run by run.sh): the official TypeScript SDK
// client talks to examples/apps over Streamable HTTP (declaring the apps
// extension), calls `chart`, reads its view, and a host page built on the
// official AppBridge renders the view in a sandboxed iframe in headless
// Chromium under the CSP the view declares. The view draws the chart, and a
// click makes it call the app-only `chart_summary` through the host.
// Prints `PASS` or `FAIL: …` last; exit code 0 or 1.
//
// usage: node run.mjs MCP_ENDPOINT_URL CHROMIUM_PATH USER_DATA_DIR
import { readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const [endpoint, chromiumPath, userDataDir] = process.argv.slice(2);
const APPS = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const VALUES = [3, 1, 4, 1, 5];
const SUMMARY = "5 values: min 1, max 5, total 14, mean 2.80";
/** Every wait is bounded by this; the whole run by WHOLE_RUN_MS. */
const WAIT_MS = 20_000;
const WHOLE_RUN_MS = 120_000;

const pageLog = [];
let step = "starting";
let client;
let browser;
let hostServer;

function check(condition, what) {
  if (!condition) throw new Error(what);
}

/** `promise`, or a failure naming `what` after WAIT_MS. */
function bounded(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${WAIT_MS / 1000} s`)), WAIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function say(line) {
  console.log(`apps-browser: ${line}`);
}

/** The host page's files: host.html and host.js bundled by esbuild. */
async function startHostServer() {
  const bundle = await esbuild.build({
    entryPoints: [path.join(HERE, "host.js")],
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const files = {
    "/host.html": ["text/html", await readFile(path.join(HERE, "host.html"))],
    "/host.js": ["text/javascript", bundle.outputFiles[0].contents],
  };
  const server = http.createServer((req, res) => {
    const file = files[new URL(req.url, "http://x").pathname];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file[0] }).end(file[1]);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/** Who may call a listed tool: `_meta.ui.visibility`, default both. */
function visibility(tool) {
  return tool?._meta?.ui?.visibility ?? ["model", "app"];
}

async function main() {
  check(endpoint && chromiumPath && userDataDir, "usage: node run.mjs MCP_ENDPOINT_URL CHROMIUM_PATH USER_DATA_DIR");

  step = "connecting the official SDK client";
  client = new Client(
    { name: "mcp-core-apps-test-host", version: "1.0.0" },
    { capabilities: { extensions: { [APPS]: { mimeTypes: [MIME] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  const caps = client.getServerCapabilities();
  check(caps?.extensions?.[APPS], `the server does not declare ${APPS}: ${JSON.stringify(caps)}`);

  step = "listing tools";
  const { tools } = await client.listTools();
  const chart = tools.find((t) => t.name === "chart");
  const summaryTool = tools.find((t) => t.name === "chart_summary");
  check(chart && summaryTool, `chart and chart_summary listed: ${JSON.stringify(tools.map((t) => t.name))}`);
  const viewUri = chart._meta?.ui?.resourceUri;
  check(viewUri === "ui://apps/chart.html", `chart's _meta.ui.resourceUri: ${viewUri}`);
  check(
    JSON.stringify(visibility(summaryTool)) === '["app"]',
    `chart_summary is app-only: ${JSON.stringify(summaryTool._meta)}`,
  );
  // What this host would show the model: the app-only tool left out.
  const forModel = tools.filter((t) => visibility(t).includes("model")).map((t) => t.name);
  check(!forModel.includes("chart_summary") && forModel.includes("chart"), `model tools: ${forModel}`);

  step = "calling chart";
  const result = await client.callTool({ name: "chart", arguments: { values: VALUES } });
  check(!result.isError, `chart failed: ${JSON.stringify(result)}`);
  check(
    JSON.stringify(result.structuredContent?.values) === JSON.stringify(VALUES),
    `chart's structuredContent: ${JSON.stringify(result.structuredContent)}`,
  );
  check(
    result.content?.[0]?.text?.includes("shown as a bar chart"),
    `the server saw the client's apps declaration: ${JSON.stringify(result.content)}`,
  );

  step = "reading the view";
  const read = await client.readResource({ uri: viewUri });
  const view = read.contents?.[0];
  check(view?.mimeType === MIME, `the view's MIME type: ${view?.mimeType}`);
  check(typeof view.text === "string" && view.text.length > 0, "the view has HTML text");
  const ui = view._meta?.ui;
  check(ui?.csp?.resourceDomains?.length > 0, `the view's _meta.ui.csp: ${JSON.stringify(ui)}`);

  // The App API the view imports from the CDN, served from node_modules
  // (no internet here): the same package and version, pinned in package.json.
  const cdn = /https:\/\/cdn\.jsdelivr\.net\/npm\/@modelcontextprotocol\/ext-apps@([^/]+)\/([^"']+)/.exec(view.text);
  check(cdn, "the view imports ext-apps from cdn.jsdelivr.net");
  const pkgDir = path.join(HERE, "node_modules/@modelcontextprotocol/ext-apps");
  const installed = JSON.parse(await readFile(path.join(pkgDir, "package.json"), "utf8")).version;
  check(cdn[1] === installed, `the view pins ext-apps ${cdn[1]}, tests/apps/package.json ${installed}: keep them equal`);
  const moduleFile = path.join(pkgDir, cdn[2]);
  check(moduleFile.startsWith(pkgDir + path.sep), `module path ${cdn[2]}`);
  const moduleSource = await readFile(moduleFile);

  step = "serving the host page";
  hostServer = await startHostServer();
  const hostOrigin = `http://127.0.0.1:${hostServer.address().port}`;

  step = "launching Chromium";
  // A fresh profile directory (run.sh makes it), given as Playwright wants
  // it: launchPersistentContext rather than --user-data-dir.
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    timeout: WAIT_MS,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Chromium puts a sandboxed iframe in a process of its own; its
      // first requests could then leave before Playwright's routing is
      // attached to that process, and the pinned module would be fetched
      // from the network (which CI does not have). One process keeps the
      // routing in place from the first request.
      "--disable-features=IsolateSandboxedIframes",
    ],
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(WAIT_MS);
  page.on("console", (m) => pageLog.push(`[console.${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => pageLog.push(`[pageerror] ${e.message}`));
  page.on("requestfailed", (r) => pageLog.push(`[requestfailed] ${r.url()} ${r.failure()?.errorText}`));

  // Only the host page and the pinned module: anything else is refused.
  const refused = [];
  await browser.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(hostOrigin + "/")) return route.continue();
    if (url === cdn[0]) {
      return route.fulfill({
        status: 200,
        contentType: "text/javascript",
        // The view runs in an opaque origin: a module script needs CORS.
        headers: { "access-control-allow-origin": "*" },
        body: moduleSource,
      });
    }
    refused.push(url);
    return route.abort();
  });

  // The view's tools/call, through the host to the server: only tools the
  // view may call (visibility with "app"), as a host must check.
  const viewCalls = [];
  await page.exposeFunction("hostCallTool", async (params) => {
    viewCalls.push(params.name);
    const tool = tools.find((t) => t.name === params.name);
    if (!tool || !visibility(tool).includes("app")) {
      return { content: [{ type: "text", text: `the view may not call ${params.name}` }], isError: true };
    }
    return client.callTool({ name: params.name, arguments: params.arguments ?? {} });
  });

  step = "opening the host page";
  await page.goto(`${hostOrigin}/host.html`);
  await page.waitForFunction(() => window.hostReady === true);

  step = "rendering the view (the view must load the App API and initialize with the host)";
  const policy = await bounded(
    page.evaluate((args) => window.renderView(args), {
      id: "view",
      html: view.text,
      ui,
      input: { values: VALUES },
      result,
    }),
    "the view's initialization",
  );
  say(`view rendered under CSP: ${policy}`);

  step = "checking the chart";
  const frame = page.frameLocator("iframe#view");
  const bars = frame.locator("rect[data-value]");
  await bars.nth(VALUES.length - 1).waitFor();
  const drawn = await bars.evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("data-value"))));
  check(JSON.stringify(drawn) === JSON.stringify(VALUES), `bars drawn: ${JSON.stringify(drawn)}`);
  const heights = await bars.evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
  check(heights[4] > heights[2] && heights[2] > heights[0] && heights[0] > heights[1], `bar heights follow the values: ${heights}`);
  const status = await frame.locator("#status").textContent();
  check(status === `${VALUES.length} values`, `the view's status: ${status}`);

  step = "clicking Summarize (the view calls chart_summary through the host)";
  await frame.locator("#summarize").click();
  const summary = frame.locator("#summary");
  await summary.filter({ hasText: SUMMARY }).waitFor().catch(async () => {
    throw new Error(`the summary shown: ${JSON.stringify(await summary.textContent())}`);
  });
  check(JSON.stringify(viewCalls) === '["chart_summary"]', `the view's tool calls through the host: ${viewCalls}`);
  check(refused.length === 0, `requests outside the host and the pinned module: ${refused}`);

  // The policy is really applied: the same view with its CSP left out may
  // not load the App API (so the run above shows the declared origins are
  // what the view needs).
  step = "rendering the view without its declared CSP (its module must be refused)";
  const violation = page.waitForEvent("console", {
    predicate: (m) => m.text().includes("Content Security Policy") && m.text().includes(cdn[0]),
  });
  const { csp: _dropped, ...uiWithoutCsp } = ui;
  await bounded(
    page.evaluate((args) => window.renderView(args), {
      id: "view-without-csp",
      html: view.text,
      ui: uiWithoutCsp,
      input: { values: VALUES },
      result,
      noWait: true,
    }),
    "rendering the view without its CSP",
  );
  await violation;
  const unstarted = await page.frameLocator("iframe#view-without-csp").locator("#status").textContent();
  check(unstarted.startsWith("Waiting"), `the view without its CSP: ${unstarted}`);
  say(`chart drawn (${drawn.join(", ")}); the view's call through the host answered "${SUMMARY}"`);
}

const watchdog = setTimeout(() => {
  console.log(`FAIL: the run took over ${WHOLE_RUN_MS / 1000} s (at: ${step})`);
  for (const line of pageLog) console.log(`  ${line}`);
  process.exit(1);
}, WHOLE_RUN_MS);

let failed = null;
try {
  await main();
} catch (e) {
  failed = e;
}
clearTimeout(watchdog);
await browser?.close().catch(() => {});
await client?.close().catch(() => {});
hostServer?.close();
if (failed) {
  console.log(`apps-browser: page log (${pageLog.length} lines):`);
  for (const line of pageLog) console.log(`  ${line}`);
  console.log(`FAIL: ${step}: ${failed?.message ?? failed}`);
  process.exit(1);
}
console.log("PASS");
process.exit(0);
