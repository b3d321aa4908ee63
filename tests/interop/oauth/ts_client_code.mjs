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

const [url] = process.argv.slice(2);
const REDIRECT = 'http://127.0.0.1:9/callback';
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

/** Follows the authorization URL like a browser: signs in, consents, returns the code. */
async function browse(start) {
  const jar = new Map();
  let next = start.href;
  let method = 'GET';
  let body;
  for (let hop = 0; hop < 20; hop += 1) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(next, { method, body, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    if ([302, 303].includes(res.status)) {
      const location = new URL(res.headers.get('location'), next);
      if (location.href.startsWith(REDIRECT)) {
        const code = location.searchParams.get('code');
        if (!code) throw new Error(`no code in the redirect: ${location.href}`);
        return code;
      }
      next = location.href; method = 'GET'; body = undefined;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`HTTP ${res.status} without a form: ${html.replace(/<style[\s\S]*?<\/style>/g, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 400)}`);
    const form = new URLSearchParams();
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) form.set(name, value);
    if (/name="login"/.test(html)) { form.set('login', 'alice'); form.set('password', 'any'); }
    next = new URL(action.replaceAll('&amp;', '&'), next).href; method = 'POST'; body = form.toString();
  }
  throw new Error('too many hops');
}

const provider = new CodeProvider();
const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
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
  const code = await browse(provider.pending);
  await transport.finishAuth(code);
  ({ client, transport } = await connect());
  await client.connect(transport);
  const me = JSON.parse((await client.callTool({ name: 'whoami', arguments: {} })).content?.[0]?.text ?? '{}');
  check('whoami names the signed-in user', me.principal === 'alice', JSON.stringify(me));
  check('the token carries notes:read', (me.scopes ?? []).includes('notes:read'), JSON.stringify(me.scopes));

  provider.pending = undefined;
  try {
    await client.callTool({ name: 'add_note', arguments: { text: 'from the code flow' } });
    check('add_note without notes:write asks for a new authorization', false, 'it succeeded');
  } catch (e) {
    check('add_note: 403 insufficient_scope -> step-up authorization', e instanceof UnauthorizedError && !!provider.pending, String(e));
  }
  check('the step-up asks for notes:write', provider.requested.at(-1) === 'notes:write', provider.requested.join(' | '));
  const code2 = await browse(provider.pending);
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
