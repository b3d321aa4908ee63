#!/usr/bin/env node
// The official TypeScript SDK client (@modelcontextprotocol/sdk) completes
// its own OAuth flow against examples/protected and the authorization
// server of as.mjs: a 401 leads it to the Protected Resource Metadata, the
// authorization server's metadata and a client-credentials token for the
// resource; a tool needing a scope the token lacks answers 403
// insufficient_scope and the SDK steps up (a new token with that scope).
// Run with `node --import <interop>/lib/preload.mjs ts_client.mjs URL ISSUER`.
// Prints one line per check and `N passed, M failed`; exits 1 on a failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, issuer] = process.argv.slice(2);

// SDK 1.32.2 steps up on a 403 insufficient_scope (it calls `auth()` again
// and retries), but its client-credentials token request takes its scope
// from `clientMetadata.scope`, not from the challenge. This provider keeps
// that scope as the union of what it asked for and what challenges named
// (the 2026-07-28 spec leaves the accumulation to the client).
class AccumulatingProvider extends ClientCredentialsProvider {
  constructor(options) {
    super(options);
    this.scopes = new Set((options.scope ?? '').split(' ').filter(Boolean));
  }
  get clientMetadata() {
    return { ...super.clientMetadata, scope: [...this.scopes].join(' ') };
  }
  challenged(header) {
    const scope = /scope="([^"]*)"/.exec(header ?? '')?.[1];
    for (const s of (scope ?? '').split(' ').filter(Boolean)) this.scopes.add(s);
  }
}
let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ts-v1 oauth: ${name}${detail ? ` (${detail})` : ''}`);
};
const statuses = [];
let provider;
const countingFetch = async (input, init) => {
  const response = await fetch(input, init);
  const challenge = response.headers.get('www-authenticate');
  statuses.push(`${init?.method ?? 'GET'} ${String(input)} ${response.status}${challenge ? ` ${challenge}` : ''}`);
  if (response.status === 403) provider?.challenged(response.headers.get('www-authenticate'));
  return response;
};

try {
  provider = new AccumulatingProvider({
    clientId: 'mcp-interop',
    clientSecret: 'mcp-interop-secret',
    scope: 'notes:read',
    expectedIssuer: issuer,
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: countingFetch });
  const client = new Client({ name: 'oauth-interop-ts', version: '1.0.0' });
  await client.connect(transport);
  check('connect after the 401 and a token', statuses.some((s) => / 401 Bearer .*resource_metadata="/.test(s)), statuses.filter((s) => s.includes(' 401')).join('; '));
  check('the token is for the resource', !!provider.tokens()?.access_token);

  const who = await client.callTool({ name: 'whoami', arguments: {} });
  const me = JSON.parse(who.content?.[0]?.text ?? '{}');
  check('whoami names the client', (me.principal === 'sub:mcp-interop' || me.principal === 'client:mcp-interop') || me.client_id === 'mcp-interop', JSON.stringify(me));
  check('the token carries notes:read', (me.scopes ?? []).includes('notes:read'), JSON.stringify(me.scopes));

  const tools = await client.listTools();
  const names = tools.tools.map((t) => t.name).sort();
  check('listing shows only what the token may use', JSON.stringify(names) === JSON.stringify(['read_notes', 'whoami']), names.join(','));

  const read = await client.callTool({ name: 'read_notes', arguments: {} });
  check('read_notes with notes:read', !read.isError && /no notes yet/.test(read.content?.[0]?.text ?? ''), read.content?.[0]?.text);

  const before = statuses.length;
  const add = await client.callTool({ name: 'add_note', arguments: { text: 'from the TypeScript SDK' } });
  const stepUp = statuses.slice(before);
  check('add_note: 403 insufficient_scope naming notes:write first',
    stepUp.some((s) => / 403 Bearer /.test(s) && /error="insufficient_scope"/.test(s) && /scope="[^"]*notes:write/.test(s)), stepUp.join('; '));
  check('the step-up got a new token', stepUp.some((s) => /\/token 200$/.test(s)), stepUp.join('; '));
  check('add_note after the step-up', !add.isError && /1 notes/.test(add.content?.[0]?.text ?? ''), add.content?.[0]?.text);
  const again = await client.callTool({ name: 'whoami', arguments: {} });
  const now = JSON.parse(again.content?.[0]?.text ?? '{}');
  check('the new token carries notes:write', (now.scopes ?? []).includes('notes:write'), JSON.stringify(now.scopes));
  const read2 = await client.callTool({ name: 'read_notes', arguments: {} });
  check('read_notes still works after the step-up', /from the TypeScript SDK/.test(read2.content?.[0]?.text ?? ''), read2.content?.[0]?.text);
  const listed = (await client.listTools()).tools.map((t) => t.name).sort();
  check('listing after the step-up shows all three', listed.length === 3, listed.join(','));
  await client.close();
} catch (e) {
  check('flow completed', false, e?.stack ?? String(e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
