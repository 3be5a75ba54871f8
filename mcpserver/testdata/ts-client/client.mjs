// Drives keel's stdio MCP server with the official TypeScript MCP client:
// lists the tools and sends the four calls of keel's story.
//
//   node client.mjs SERVER_BINARY SCHEMA_DIR
//
// Prints one line per check and a closing "N passed, M failed" line; exits 1
// if any check failed.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { check, finish } from "./checks.mjs";

const [server, schemaDir] = process.argv.slice(2);
if (!server || !schemaDir) {
  console.error("usage: node client.mjs SERVER_BINARY SCHEMA_DIR");
  process.exit(2);
}

// Key order does not matter when comparing JSON values.
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  }
  return v;
}
const same = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const schema = (tool, side) => JSON.parse(readFileSync(join(schemaDir, `${tool}.${side}.json`), "utf8"));
const keelResult = (res) => JSON.parse(res.content[0].text);

const client = new Client({ name: "keel-ts-check", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: server, args: [], stderr: "ignore" }));

try {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check("tools/list names", same(names, ["create_ticket", "lookup_incident"]), JSON.stringify(names));
  for (const t of tools) {
    check(`${t.name} inputSchema is keel's`, same(t.inputSchema, schema(t.name, "input")), JSON.stringify(t.inputSchema));
    check(`${t.name} outputSchema is keel's`, same(t.outputSchema, schema(t.name, "output")), JSON.stringify(t.outputSchema));
    const read = t.name === "lookup_incident";
    check(`${t.name} annotations`, t.annotations?.readOnlyHint === read && t.annotations?.destructiveHint === !read &&
      t.annotations?.openWorldHint === true, JSON.stringify(t.annotations));
  }

  // call-valid
  const valid = await client.callTool({ name: "lookup_incident", arguments: { incident_id: "INC-001" } });
  check("call-valid succeeds", !valid.isError && valid.structuredContent?.service === "auth-api" &&
    valid.structuredContent?.symptom === "登录接口持续返回 502", JSON.stringify(valid));

  // call-unknown: the protocol makes it a JSON-RPC error
  try {
    await client.callTool({ name: "delete_prod", arguments: { target: "db-main" } });
    check("call-unknown is a JSON-RPC error", false, "no error");
  } catch (e) {
    check("call-unknown is a JSON-RPC error -32602", e.code === -32602, `${e.code} ${e.message}`);
  }

  // call-invalid
  const invalid = await client.callTool({ name: "lookup_incident", arguments: { incident_id: 42 } });
  check("call-invalid is invalid_arguments", invalid.isError === true && keelResult(invalid).error?.code === "invalid_arguments",
    JSON.stringify(invalid));

  // call-write
  const write = await client.callTool({ name: "create_ticket", arguments: { incident_id: "INC-001", summary: "Raise the auth-api database pool size" } });
  check("call-write is approval_required", write.isError === true && keelResult(write).error?.code === "approval_required",
    JSON.stringify(write));
} catch (e) {
  check("client run", false, e.stack ?? String(e));
} finally {
  await client.close();
}

finish("mcp-ts");
