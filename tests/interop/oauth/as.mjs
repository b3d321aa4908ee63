#!/usr/bin/env node
// A real authorization server for the OAuth interop test: oidc-provider
// (OpenID-certified), configured with resource indicators (RFC 8707), JWT
// access tokens for the one resource it serves, the client credentials grant
// and RFC 7662 introspection. Its signing key (RS256) is made at start.
//
//   node as.mjs PORT RESOURCE     # prints "AS ready: <issuer>" on stderr
//
// Clients: `mcp-interop`, secret `mcp-interop-secret` (client credentials,
// client_secret_basic); `mcp-interop-code`, public (authorization code with
// PKCE, redirect `http://127.0.0.1:9/callback`, never listened on: the test
// reads the code from the redirect). Both may get `notes:read notes:write`.
// Login and consent are oidc-provider's development pages (any login).
// Dynamic client registration (RFC 7591) is open, for our own client's
// deprecated fallback: each registration logs "AS client registered".
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const [port, resource] = process.argv.slice(2);
if (!port || !resource) {
  console.error('usage: node as.mjs PORT RESOURCE');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
const SCOPES = 'notes:read notes:write';

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [{
    client_id: 'mcp-interop',
    client_secret: 'mcp-interop-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: SCOPES,
  }, {
    client_id: 'mcp-interop-code',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1:9/callback'],
    scope: SCOPES,
  }],
  scopes: SCOPES.split(' '),
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, indicator) {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return {
          scope: SCOPES,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});
provider.on('server_error', (ctx, err) => console.error('AS server_error:', err));
provider.on('grant.error', (ctx, err) => console.error('AS grant.error:', err.message, err.error_description ?? ''));
provider.on('grant.success', (ctx) => {
  const scope = ctx.oidc?.body?.scope ?? '';
  console.error(`AS token issued (scope requested: "${scope}")`);
});
provider.on('registration_create.success', (ctx, client) => {
  console.error(`AS client registered: ${client.clientId}`);
});
provider.listen(Number(port), '127.0.0.1', () => console.error(`AS ready: ${issuer}`));
