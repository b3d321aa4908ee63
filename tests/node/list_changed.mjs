// The official TypeScript SDK client (v1, from the interop harness in
// $INTEROP_HOME) receives `notifications/tools/list_changed` from a live
// catalog: examples/gateway started with one toolset, the meta-tool
// `enable_toolset` adds another while serving, and the client's own
// notification handler must fire before the new tool is listed.
//
// usage: node list_changed.mjs --stdio GATEWAY_BINARY
//        node list_changed.mjs --url http://127.0.0.1:PORT/mcp
import { pathToFileURL } from "node:url";

const home = process.env.INTEROP_HOME;
if (!home) {
  console.error("INTEROP_HOME is not set (the interop harness's install dir)");
  process.exit(2);
}
const sdk = `${home}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const load = (p) => import(pathToFileURL(`${sdk}/${p}`).href);
const { Client } = await load("client/index.js");
const { ToolListChangedNotificationSchema } = await load("types.js");

const [mode, target] = process.argv.slice(2);
let transport;
if (mode === "--stdio") {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: target, args: ["--toolsets", "core"] });
} else if (mode === "--url") {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  // Over HTTP each request names its role, and the gateway treats a
  // request naming none as a viewer, which may not change the catalog.
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { "x-gateway-role": "admin" } },
  });
} else {
  console.error("usage: list_changed.mjs --stdio BINARY | --url URL");
  process.exit(2);
}

const fail = (why) => {
  console.error(`FAIL (${mode}): ${why}`);
  process.exit(1);
};
const client = new Client({ name: "list-changed-check", version: "0.0.0" });
let heard;
const notified = new Promise((resolve) => (heard = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => heard());
await client.connect(transport);

const caps = client.getServerCapabilities();
if (caps?.tools?.listChanged !== true) fail(`tools.listChanged not advertised: ${JSON.stringify(caps)}`);
const names = async () => (await client.listTools()).tools.map((t) => t.name);
const before = await names();
if (before.includes("task_close")) fail(`task_close listed before: ${before}`);
const result = await client.callTool({ name: "enable_toolset", arguments: { name: "tasks" } });
if (result.isError) fail(`enable_toolset failed: ${JSON.stringify(result)}`);
const timer = setTimeout(() => fail("no notifications/tools/list_changed within 10 s"), 10_000);
await notified;
clearTimeout(timer);
const after = await names();
if (!after.includes("task_close")) fail(`task_close not listed after: ${after}`);
console.log(`ok (${mode}): list_changed received; tools ${before.length} -> ${after.length}`);
await client.close();
process.exit(0);
