// Issue 16, finding 8: a body over the limit must reach Node's fetch (what
// the official TypeScript SDK uses) as a 413, not as EPIPE or a reset.
// fetch sends the whole body before it reads the answer, so the server has
// to keep reading (and discarding) the refused body before it closes.
//
// Usage: node tests/node/fetch_too_large.mjs URL [TIMES]
// Exits 0 when each of TIMES (default 10) POSTs of 3 MB is answered 413.
const [url, times = "10"] = process.argv.slice(2);
if (!url) {
  console.error("usage: node fetch_too_large.mjs URL [TIMES]");
  process.exit(2);
}
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "ping",
  params: { pad: "x".repeat(3 * 1000 * 1000) },
});
let failed = 0;
for (let i = 1; i <= Number(times); i++) {
  try {
    const r = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body,
    });
    const text = await r.text();
    if (r.status === 413) {
      console.log(`POST ${i}: 413 ${text}`);
    } else {
      failed++;
      console.error(`POST ${i}: expected 413, got ${r.status} ${text.slice(0, 200)}`);
    }
  } catch (e) {
    failed++;
    console.error(`POST ${i}: fetch failed: ${e} (cause: ${e.cause?.code ?? e.cause})`);
  }
}
if (failed) {
  console.error(`FAIL: ${failed} of ${times} POSTs of 3 MB did not get their 413`);
  process.exit(1);
}
console.log(`ok: ${times} POSTs of 3 MB were each answered 413`);
