// The official TypeScript MCP client as a desktop host: the authorization
// code flow with PKCE, a pre-registered public client and a loopback
// redirect. A 401 names the server's metadata, which names the provider;
// the client sends the person to the provider's pages, which this script
// fills in as a person would (any login, then Continue), finishes with the
// code, connects again and calls. One JSON line per step.
//
//   node oauth-code.mjs URL LOGIN TOOL...
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { listAndCall } from './calls.mjs';

const [url, login, ...tools] = process.argv.slice(2);
const redirect = 'http://127.0.0.1/callback';

// person fills in the provider's login and consent pages and returns the
// code it redirects to.
async function person(authURL) {
  const cookies = new Map();
  const send = async (target, body) => {
    const headers = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const r = await fetch(target, { method: body ? 'POST' : 'GET', body, headers, redirect: 'manual' });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return r;
  };
  let r = await send(authURL);
  for (let step = 0; step < 12; step++) {
    const loc = r.headers.get('location');
    if (loc) {
      const next = new URL(loc, r.url || authURL);
      if (next.href.startsWith(redirect)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`the provider refused: ${next.search}`);
        return code;
      }
      r = await send(next.href);
      continue;
    }
    const page = await r.text();
    const m = page.match(/<form[^>]*action="([^"]+)"/);
    if (!m) throw new Error(`a page without a form: ${page.slice(0, 200)}`);
    const action = new URL(m[1].replaceAll('&amp;', '&'), authURL).href;
    const fields = page.includes('name="login"')
      ? new URLSearchParams({ prompt: 'login', login, password: 'any' })
      : new URLSearchParams({ prompt: 'consent' });
    r = await send(action, fields.toString());
  }
  throw new Error('no code after the provider pages');
}

class DesktopProvider {
  constructor() { this.info = { client_id: 'keel-desktop' }; }
  get redirectUrl() { return redirect; }
  get clientMetadata() {
    return { client_name: 'keel-desktop', redirect_uris: [redirect], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(authURL) { this.code = await person(authURL.href); }
}

const authProvider = new DesktopProvider();
const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
  const client = new Client({ name: 'keel-desktop-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
};
let client;
try {
  client = await connect();
} catch (e) {
  if (!(e instanceof UnauthorizedError) || !authProvider.code) throw e;
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
  await transport.finishAuth(authProvider.code);
  console.log(JSON.stringify({ step: 'login' }));
  client = await connect();
}
await listAndCall(client, tools);
await client.close();
