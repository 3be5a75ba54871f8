// The official TypeScript MCP client finds its own way into a keel HTTP
// server behind an OpenID provider: a 401 names the server's Protected
// Resource Metadata, which names the provider; the client reads the
// provider's metadata, gets a token for the server's resource by the client
// credentials grant (RFC 8707 resource), and calls; on a 403 naming a scope
// it lacks, it asks for that scope too and tries again. One JSON line per
// step.
//
//   node oauth.mjs URL CLIENT_ID CLIENT_SECRET ISSUER SCOPE TOOL...
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

import { listAndCall } from './calls.mjs';

const [url, clientId, clientSecret, issuer, scope, ...tools] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
const client = new Client({ name: 'keel-oauth-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
await listAndCall(client, tools);
await client.close();
