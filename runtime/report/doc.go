// Package report carries what a handler tells its caller while a call runs:
// log messages (Log) and progress (Progress). A handler calls them with the
// context the executor gave it; they reach the caller only when the server
// that runs the call listens (WithLog, WithProgress: the MCP server does for
// a client that asked), and cost a context lookup otherwise. Both are
// bounded and rate-limited per call, and neither is the server's own log:
// a message is the handler's text for the caller, like its result.
package report
