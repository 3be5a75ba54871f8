// Package front is keel's one reading of each MCP message, before anything
// else reads it: on stdio (mcpserver's own framing), over HTTP (its
// envelope check), and on any other transport from the message the SDK
// decoded. It says what a message is and never runs one; mcpserver routes
// on what it read (answers a call, hands the rest to the SDK as sent, or
// refuses it).
//
//   - Read takes a frame's bytes once, as spans of the frame: the envelope,
//     the params and their _meta, and whether any of them names a member
//     twice (the SDK's decoder takes the last of the two, while a proxy, an
//     audit or a person reading it may take the first).
//   - A tools/call's request (CallParams, RevisionMeta) is built from those
//     spans, its arguments left as their exact bytes for the executor's one
//     strict reader: nothing the SDK's decoder would refuse or read
//     otherwise (a number past a float64, nesting past 1,000 levels, a
//     member's case) decides what runs.
//   - The headers a client sends about a call (SEP-2243's Mcp-Param-*,
//     ParamHeadersMatch; Mcp-Name, HeaderSafe) are checked against those
//     bytes, exactly.
//   - ForSDK is the message the SDK gets for any other frame, decoded from
//     the same reading.
package front
