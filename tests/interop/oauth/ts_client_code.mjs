#!/usr/bin/env node
// The official TypeScript SDK client (@modelcontextprotocol/sdk) through the
// authorization code flow with PKCE against examples/protected and the
// authorization server of as.mjs, its login and consent pages filled in by
// this script (what a person would click): 401 -> metadata -> authorization
// URL (with the resource indicator) -> code -> token; then a tool needing a
// scope the token lacks answers 403 insufficient_scope, the SDK asks for a
// new authorization with that scope (step-up), and the call succeeds.
// Run with `node --import <interop>/lib/preload.mjs ts_client_code.mjs URL`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { browse, REDIRECT } from './browser.mjs';

const [url] = process.argv.slice(2);
let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ts-v1 oauth code: ${name}${detail ? ` (${detail})` : ''}`);
};

/** A pre-registered public client; the authorization URL is kept for the "browser". */
class CodeProvider {
  constructor() { this.pending = undefined; this.requested = []; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'oauth-interop-ts-code', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return { client_id: 'mcp-interop-code' }; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  // SDK 1.32.2 asks a step-up authorization for the challenged scope alone;
  // the 2026-07-28 spec leaves accumulating scopes to the client, so the
  // provider (the application's part of the flow) asks for what it had too.
  redirectToAuthorization(authorizationUrl) {
    const asked = (authorizationUrl.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
    this.requested.push(asked.join(' '));
    this.granted = [...new Set([...(this.granted ?? []), ...asked])];
    authorizationUrl.searchParams.set('scope', this.granted.join(' '));
    this.pending = authorizationUrl;
  }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
}

const statuses = [];
const recordingFetch = async (input, init) => {
  const response = await fetch(input, init);
  if (String(input).startsWith(url)) statuses.push(`${response.status} ${response.headers.get('www-authenticate') ?? ''}`.trim());
  return response;
};
const provider = new CodeProvider();
const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
  const client = new Client({ name: 'oauth-interop-ts-code', version: '1.0.0' });
  return { client, transport };
};

try {
  let { client, transport } = await connect();
  try {
    await client.connect(transport);
    check('the first request is challenged', false, 'connected without authorization');
  } catch (e) {
    check('the first request is challenged (401 -> authorization URL)', e instanceof UnauthorizedError && !!provider.pending, String(e));
  }
  check('the authorization URL names the resource', provider.pending?.searchParams.get('resource') === url, provider.pending?.href);
  check('the authorization URL uses PKCE S256', provider.pending?.searchParams.get('code_challenge_method') === 'S256');
  const code = (await browse(provider.pending)).get('code');
  await transport.finishAuth(code);
  ({ client, transport } = await connect());
  await client.connect(transport);
  const me = JSON.parse((await client.callTool({ name: 'whoami', arguments: {} })).content?.[0]?.text ?? '{}');
  check('whoami names the signed-in user', me.principal === 'sub:alice', JSON.stringify(me));
  check('the token carries notes:read', (me.scopes ?? []).includes('notes:read'), JSON.stringify(me.scopes));

  provider.pending = undefined;
  const before = statuses.length;
  try {
    await client.callTool({ name: 'add_note', arguments: { text: 'from the code flow' } });
    check('add_note without notes:write asks for a new authorization', false, 'it succeeded');
  } catch (e) {
    check('add_note: 403 insufficient_scope -> step-up authorization', e instanceof UnauthorizedError && !!provider.pending, String(e));
  }
  const denied = statuses.slice(before);
  check('the 403 says insufficient_scope and names notes:write',
    denied.some((s) => s.startsWith('403 ') && /error="insufficient_scope"/.test(s) && /scope="[^"]*notes:write/.test(s)), denied.join(' | '));
  check('the step-up asks for notes:write', provider.requested.at(-1) === 'notes:write', provider.requested.join(' | '));
  const code2 = (await browse(provider.pending)).get('code');
  await transport.finishAuth(code2);
  ({ client, transport } = await connect());
  await client.connect(transport);
  const added = await client.callTool({ name: 'add_note', arguments: { text: 'from the code flow' } });
  check('add_note after the step-up', !added.isError && /notes/.test(added.content?.[0]?.text ?? ''), added.content?.[0]?.text);
  const after = JSON.parse((await client.callTool({ name: 'whoami', arguments: {} })).content?.[0]?.text ?? '{}');
  check('the new token carries both scopes', ['notes:read', 'notes:write'].every((s) => (after.scopes ?? []).includes(s)), JSON.stringify(after.scopes));
  await client.close();
} catch (e) {
  check('flow completed', false, e?.stack ?? String(e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
