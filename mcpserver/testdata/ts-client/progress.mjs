// Drives a slow keel tool (progress-server) with the official TypeScript MCP
// client, over stdio and over Streamable HTTP: a call longer than the
// client's timeout completes because keel's progress notifications reset it,
// and the same call without the reset times out, which the server records as
// cancelled.
//
//   node progress.mjs SERVER_BINARY
//
// Prints one line per check and a closing "N passed, M failed" line; exits 1
// if any check failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

import { check, finish, startHTTP } from "./checks.mjs";

const [server] = process.argv.slice(2);
if (!server) {
  console.error("usage: node progress.mjs SERVER_BINARY");
  process.exit(2);
}

// longCalls runs the checks on a connected client; log() is the server's
// stderr so far (its audit log).
async function longCalls(label, client, log) {
  // Six steps of 400 ms: 2.4 s against a 1 s timeout that progress resets.
  const seen = [];
  const started = Date.now();
  const res = await client.callTool({ name: "deploy", arguments: { steps: 6 } }, CallToolResultSchema, {
    timeout: 1000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => seen.push(p),
  });
  const took = Date.now() - started;
  check(`${label}: a 2.4 s call outlives a 1 s timeout on progress`, !res.isError && res.structuredContent?.done === 6 && took > 1000,
    `${took} ms, ${JSON.stringify(res)}`);
  // keel writes all six before the result, but the client runs notification
  // handlers a microtask late and drops its progress handler on the result,
  // so the last one can miss when it arrives in one read with the result.
  check(`${label}: the steps' progress arrives, in order`, seen.length >= 5 && seen.every((p, i) => p.progress === i + 1 && p.total === 6 &&
    p.message === `step ${i + 1} of 6`), JSON.stringify(seen));

  // The same call without the reset: the client gives up at 1 s and sends
  // notifications/cancelled; keel ends the handler's context.
  let err;
  try {
    await client.callTool({ name: "deploy", arguments: { steps: 6 } }, CallToolResultSchema, { timeout: 1000, onprogress: () => {} });
  } catch (e) {
    err = e;
  }
  check(`${label}: without the reset the client times out`, err && /timed out/i.test(String(err)), String(err));
  // The server's audit line for the cancelled call comes once its handler sees the context end.
  const deadline = Date.now() + 3000;
  while (!/"code":"tool_cancelled"/.test(log()) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  check(`${label}: the server records the abandoned call as tool_cancelled`, /"code":"tool_cancelled"/.test(log()), log().slice(-500));
}

async function overStdio() {
  const client = new Client({ name: "keel-ts-progress", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: server, args: [], stderr: "pipe" });
  let log = "";
  transport.stderr?.on("data", (b) => (log += b));
  await client.connect(transport);
  try {
    await longCalls("stdio", client, () => log);
  } finally {
    await client.close();
  }
}

// Over HTTP a call with a progress token is answered as an event stream:
// the progress on it, then the result.
async function overHTTP() {
  const { url, log, proc } = await startHTTP(server);
  try {
    const client = new Client({ name: "keel-ts-progress", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      await longCalls("http", client, log);
    } finally {
      await client.close();
    }
  } finally {
    proc.kill();
  }
}

for (const [label, run] of [["stdio", overStdio], ["http", overHTTP]]) {
  try {
    await run();
  } catch (e) {
    check(`${label}: client run`, false, e.stack ?? String(e));
  }
}
finish("mcp-ts progress");
