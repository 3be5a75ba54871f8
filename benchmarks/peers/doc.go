// Package peers measures keel's MCP server against its peers on the same
// tool: mark3labs/mcp-go and the official go-sdk's typed mcp.AddTool, with
// the go-sdk's raw Server.AddTool (which checks nothing) as the floor,
// each driven by the official go-sdk client over the same transports. It is
// a module of its own, so no peer enters keel's go.sum; docs/performance.md
// has its table and how to run it.
package peers
