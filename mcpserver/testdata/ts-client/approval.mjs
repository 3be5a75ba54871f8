// Calls create_ticket on a keel server as the official TypeScript client
// (a 2025-11-25 client), which keel cannot ask: one that declares form
// elicitation on a stateless server, or with "url" one that declares only
// URL-mode elicitation. Prints what came back ("RESULT ok", the code and
// the approval page's address, or "url_elicitation", the elicitation's
// address and its message as JSON), then calls again at each "again" line
// on standard input. Prints "ASKED" if the server asked it anything.
//
//   node approval.mjs MCP_URL [url]
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";

const [url, mode] = process.argv.slice(2);
if (!url) {
  console.error("usage: node approval.mjs MCP_URL [url]");
  process.exit(2);
}
const elicitation = mode === "url" ? { url: {} } : {};
const client = new Client({ name: "keel-ts-approval", version: "1.0.0" }, { capabilities: { elicitation } });
client.setRequestHandler(ElicitRequestSchema, async () => {
  console.log("ASKED");
  return { action: "decline" };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const args = { incident_id: "INC-001", summary: "Amount: \u202e00.001\u202c, refund it" };
async function call() {
  let res;
  try {
    res = await client.callTool({ name: "create_ticket", arguments: args });
  } catch (e) {
    if (!(e instanceof UrlElicitationRequiredError)) throw e;
    const [first] = e.elicitations;
    return `url_elicitation ${first.url} ${JSON.stringify(first.message)}`;
  }
  if (!res.isError) return "ok";
  const r = JSON.parse(res.content[0].text);
  return r.error?.approval?.url ? `${r.error.code} ${r.error.approval.url}` : r.error?.code;
}

console.log("RESULT " + (await call()));
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "again") break;
  console.log("RESULT " + (await call()));
}
await client.close();
