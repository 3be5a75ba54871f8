// Drives the seat tool of progress-server, whose handler asks the person for
// a seat, with both official TypeScript clients (the sdk package 1.32.2 and
// the client package 2.4.0) at each revision before 2026-07-28, over stdio
// and over Streamable HTTP. The first answer does not fit the form (a
// member it lacks, which the clients' own check lets through and keel's
// reader does not): keel asks again with elicitation/create and the call
// completes, never answering with a 2026-07-28 input request, which these
// clients cannot read. A 2025-03-26 client, whose revision has no
// elicitation, is never sent one: the call ends input_unavailable.
//
//   node ask.mjs SERVER_BINARY
//
// Prints one line per check and a closing "N passed, M failed" line; exits 1
// if any check failed.

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HTTPV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2, StreamableHTTPClientTransport as HTTPV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";

import { check, finish, startHTTP } from "./checks.mjs";

const [server] = process.argv.slice(2);
if (!server) {
  console.error("usage: node ask.mjs SERVER_BINARY");
  process.exit(2);
}

const clients = {
  "sdk 1.32.2": {
    client: (answer) => {
      const c = new ClientV1({ name: "keel-ts-ask", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
      c.setRequestHandler(ElicitRequestSchema, answer);
      return c;
    },
    stdio: (args) => new StdioV1(args),
    http: (url) => new HTTPV1(new URL(url)),
  },
  "client 2.4.0": {
    client: (answer) => {
      const c = new ClientV2({ name: "keel-ts-ask", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
      c.setRequestHandler("elicitation/create", answer);
      return c;
    },
    stdio: (args) => new StdioV2(args),
    http: (url) => new HTTPV2(new URL(url)),
  },
};

// pinned makes the client's initialize ask for version: these clients
// always ask for their latest, and take an older one the server answers.
function pinned(transport, version) {
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg.method === "initialize") {
      msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
    }
    return send(msg, opts);
  };
  return transport;
}

// seatCall calls seat once over transport and checks what came back;
// log() is the server's audit so far, and before its length at the start.
async function seatCall(label, kind, version, transport, log) {
  let asked = 0;
  const client = clients[kind].client(async () => {
    asked++;
    return { action: "accept", content: asked === 1 ? { seat: "12A", window: "yes" } : { seat: "12A" } };
  });
  const before = log().length;
  await client.connect(pinned(transport, version));
  try {
    const res = await client.callTool({ name: "seat", arguments: {} });
    const audit = log().slice(before);
    const rounds = (audit.match(/"code":"input_required"/g) ?? []).length;
    if (version === "2025-03-26") {
      check(`${label}: a ${version} client is never sent elicitation/create; the call is input_unavailable`,
        asked === 0 && res.isError && /"input_unavailable"/.test(res.content?.[0]?.text ?? ""), `asked ${asked}; ${JSON.stringify(res)}`);
      return;
    }
    check(`${label}: an answer that does not fit is asked again, and the call completes`,
      asked === 2 && !res.isError && res.structuredContent?.seat === "12A" && res.inputRequests === undefined, `asked ${asked}; ${JSON.stringify(res)}`);
    check(`${label}: both rounds are audited input_required`, rounds === 2, audit.slice(-800));
  } finally {
    await client.close();
  }
}

async function overStdio(kind, version) {
  let log = "";
  const transport = clients[kind].stdio({ command: server, args: [], stderr: "pipe" });
  transport.stderr?.on("data", (b) => (log += b));
  await seatCall(`${kind}, ${version}, stdio`, kind, version, transport, () => log);
}

async function overHTTP(url, log) {
  for (const kind of Object.keys(clients)) {
    for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
      await seatCall(`${kind}, ${version}, HTTP session`, kind, version, clients[kind].http(url), log);
    }
  }
}

for (const kind of Object.keys(clients)) {
  for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
    try {
      await overStdio(kind, version);
    } catch (e) {
      check(`${kind}, ${version}, stdio: client run`, false, e.stack ?? String(e));
    }
  }
}

try {
  const { url, log, proc } = await startHTTP(server);
  try {
    await overHTTP(url, log);
  } finally {
    proc.kill();
  }
} catch (e) {
  check("HTTP: client run", false, e.stack ?? String(e));
}
finish("mcp-ts ask");
