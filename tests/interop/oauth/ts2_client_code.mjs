#!/usr/bin/env node
// The official TypeScript SDK v2 client (@modelcontextprotocol/client)
// through its own authorization code flow with PKCE against
// examples/protected and the authorization server of as.mjs; the login and
// consent pages are filled in by browser.mjs (what a person would click).
// 401 -> metadata -> authorization URL (resource indicator, S256) -> code ->
// token -> tool calls; then a tool needing a scope the token lacks answers
// 403 insufficient_scope and the SDK itself asks for a new authorization
// with the union of the scopes it had and the challenged one (step-up): this
// provider does not touch the URL the SDK builds, so the check of the asked
// scope judges the SDK and the challenge of examples/protected.
// Run with `node --import <interop>/lib/preload.mjs ts2_client_code.mjs URL`.
// Prints one line per check and `N passed, M failed`; exits 1 on a failure.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { browse, REDIRECT } from './browser.mjs';

const [url] = process.argv.slice(2);
let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ts-v2 oauth code: ${name}${detail ? ` (${detail})` : ''}`);
};

/** A pre-registered public client; keeps what the SDK hands it, nothing more. */
class CodeProvider {
  constructor() { this.pending = undefined; this.asked = []; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'oauth-interop-ts2-code', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return { client_id: 'mcp-interop-code' }; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  redirectToAuthorization(authorizationUrl) {
    this.asked.push(authorizationUrl.searchParams.get('scope') ?? '');
    this.pending = authorizationUrl;
  }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  // Kept with the verifier, so the SDK can check that the callback comes
  // from the authorization server it sent the user to (SEP-2352).
  saveDiscoveryState(state) { this._discovery = state; }
  discoveryState() { return this._discovery; }
}

const statuses = [];
const recordingFetch = async (input, init) => {
  const response = await fetch(input, init);
  const target = String(input instanceof Request ? input.url : input);
  if (target.startsWith(url)) {
    statuses.push(`${response.status} ${response.headers.get('www-authenticate') ?? ''}`.trim());
  }
  return response;
};

const provider = new CodeProvider();
const open = () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
  const client = new Client({ name: 'oauth-interop-ts2-code', version: '1.0.0' });
  return { client, transport };
};
const scopesOf = (s) => (s ?? '').split(' ').filter(Boolean).sort().join(' ');

try {
  let { client, transport } = open();
  try {
    await client.connect(transport);
    check('the first request is challenged', false, 'connected without authorization');
  } catch (e) {
    check('the first request is challenged (401 -> authorization URL)', e instanceof UnauthorizedError && !!provider.pending, String(e));
  }
  check('the 401 names the resource metadata', statuses.some((s) => s.startsWith('401 ') && /resource_metadata="/.test(s)), statuses.join(' | '));
  check('the authorization URL names the resource', provider.pending?.searchParams.get('resource') === url, provider.pending?.href);
  check('the authorization URL uses PKCE S256', provider.pending?.searchParams.get('code_challenge_method') === 'S256');
  check('the first authorization asks the challenged notes:read', scopesOf(provider.asked[0]) === 'notes:read', provider.asked.join(' | '));
  await transport.finishAuth(await browse(provider.pending));
  ({ client, transport } = open());
  await client.connect(transport);
  const me = JSON.parse((await client.callTool({ name: 'whoami', arguments: {} })).content?.[0]?.text ?? '{}');
  check('whoami names the signed-in user', me.principal === 'sub:alice', JSON.stringify(me));
  check('the token carries notes:read only', scopesOf((me.scopes ?? []).join(' ')) === 'notes:read', JSON.stringify(me.scopes));
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  check('listing shows only what the token may use', JSON.stringify(names) === JSON.stringify(['read_notes', 'whoami']), names.join(','));

  provider.pending = undefined;
  const before = statuses.length;
  try {
    await client.callTool({ name: 'add_note', arguments: { text: 'from the v2 code flow' } });
    check('add_note without notes:write asks for a new authorization', false, 'it succeeded');
  } catch (e) {
    check('add_note: the SDK answers the 403 with a step-up authorization', e instanceof UnauthorizedError && !!provider.pending, String(e));
  }
  const denied = statuses.slice(before);
  check('the 403 says insufficient_scope and names notes:write',
    denied.some((s) => s.startsWith('403 ') && /error="insufficient_scope"/.test(s) && /scope="[^"]*notes:write/.test(s)), denied.join(' | '));
  check('the step-up asks the union notes:read notes:write', scopesOf(provider.asked.at(-1)) === 'notes:read notes:write', provider.asked.join(' | '));
  await transport.finishAuth(await browse(provider.pending));
  ({ client, transport } = open());
  await client.connect(transport);
  const added = await client.callTool({ name: 'add_note', arguments: { text: 'from the v2 code flow' } });
  check('add_note after the step-up', !added.isError && /^\d+ notes$/.test(added.content?.[0]?.text ?? ''), added.content?.[0]?.text);
  const after = JSON.parse((await client.callTool({ name: 'whoami', arguments: {} })).content?.[0]?.text ?? '{}');
  check('the new token carries both scopes', scopesOf((after.scopes ?? []).join(' ')) === 'notes:read notes:write', JSON.stringify(after.scopes));
  const notes = (await client.callTool({ name: 'read_notes', arguments: {} })).content?.[0]?.text ?? '';
  check('read_notes shows the note', /from the v2 code flow/.test(notes), notes);
  await client.close();
} catch (e) {
  check('flow completed', false, e?.stack ?? String(e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
