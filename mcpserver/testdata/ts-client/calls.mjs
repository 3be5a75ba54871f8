// listAndCall prints the tools client lists, then calls each of tools with
// no arguments: one JSON line per step, what the Go tests read. A call the
// client refuses to make (a 403 it could not step up past: its provider did
// not grant the scope) is printed as an error.
export async function listAndCall(client, tools) {
  const listed = await client.listTools();
  console.log(JSON.stringify({ step: 'list', tools: listed.tools.map((t) => t.name) }));
  for (const name of tools) {
    try {
      const r = await client.callTool({ name, arguments: {} });
      console.log(JSON.stringify({ step: 'call', tool: name, isError: r.isError === true, text: r.content[0]?.text ?? '' }));
    } catch (e) {
      console.log(JSON.stringify({ step: 'call', tool: name, isError: true, error: String(e.message) }));
    }
  }
}
