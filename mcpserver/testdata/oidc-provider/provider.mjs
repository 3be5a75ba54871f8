// A real OpenID Connect provider on loopback for keel's tests: panva's
// oidc-provider (OpenID certified), issuing JWT access tokens (RFC 9068)
// by the client credentials grant and the authorization code flow, for a
// resource named by RFC 8707's resource parameter. Its signing key is made at start under the key id
// KID, so a restart with another KID on the same PORT is a key rotation.
//
//   PORT=0 KID=k1 RESOURCE=http://127.0.0.1:9/mcp node provider.mjs
//
// prints "issuer http://127.0.0.1:PORT" once it listens.
import http from 'node:http';
import { generateKeyPair, exportJWK } from 'jose';
import Provider, { errors } from 'oidc-provider';

const resource = process.env.RESOURCE;
const kid = process.env.KID || 'k1';
if (!resource) {
  console.error('RESOURCE is required');
  process.exit(2);
}
// Another resource the provider also serves: a token for it must not open keel.
const otherResource = 'https://other.example/api';

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.env.PORT || 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

// What each client may be granted for a resource, as an identity
// provider's per-client API permissions: a request for more is granted
// only these (the Go SDK's handler asks for every scope the server lists).
const granted = {
  'keel-agent': 'notes:read notes:write', 'keel-reader': 'notes:read', 'keel-short': 'notes:read', 'keel-desktop': 'notes:read notes:write',
};

const client = (id) => ({
  client_id: id,
  client_secret: `${id}-secret-that-is-long-enough`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  id_token_signed_response_alg: 'ES256',
  scope: 'notes:read notes:write',
});

const provider = new Provider(issuer, {
  clients: [
    client('keel-agent'),
    client('keel-reader'),
    client('keel-short'), // its tokens live one second
    // A public client of the authorization code flow with PKCE, on a
    // loopback redirect (RFC 8252), as a desktop MCP host is.
    {
      client_id: 'keel-desktop',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
      scope: 'notes:read notes:write',
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['notes:read', 'notes:write'],
  features: {
    // The development login and consent pages: any login, any password; a
    // test fills them in as a person would.
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      // The resource of a token request that names none, as an identity
      // provider's default audience: the Go SDK's client credentials
      // handler (v1.8.0) sends no resource parameter.
      defaultResource: () => resource,
      getResourceServerInfo(ctx, indicator, c) {
        if (indicator !== resource && indicator !== otherResource) {
          throw new errors.InvalidTarget();
        }
        return {
          scope: granted[c.clientId],
          audience: indicator,
          accessTokenTTL: c.clientId === 'keel-short' ? 1 : 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
});
provider.proxy = false;
server.on('request', provider.callback());
console.log(`issuer ${issuer}`);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
