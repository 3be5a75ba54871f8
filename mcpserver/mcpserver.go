// Package mcpserver serves a keel tool set over the Model Context Protocol
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk), on
// stdio or Streamable HTTP.
//
// tools/list shows each tool's inputSchema and outputSchema exactly as keel
// generated them (never the SDK's inference) and annotations set from the
// tool's effect. tools/call runs through keel's executor unchanged: success
// returns structuredContent and the same JSON as text; every keel failure
// returns isError with keel's result JSON (its code included), except
// unknown_tool, which the protocol makes a JSON-RPC error (-32602). The
// ExecutionContext of a call comes from the server owner's hook, never from
// the client.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/internal/schemajson"
	"github.com/keelgen/keel/runtime"
)

// ContextFunc decides the ExecutionContext of one call: per session (stdio:
// req.Session) or per HTTP request (req.Extra.Header, req.Extra.TokenInfo).
type ContextFunc func(ctx context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext

// Options configure a server.
type Options struct {
	// Name and Version identify the server to clients (default "keel" and
	// the runtime version).
	Name, Version string
	// Context gives each call its ExecutionContext. Nil means the zero
	// ExecutionContext: read tools run, write tools need approval.
	Context ContextFunc
}

// New returns an MCP server whose tools are exactly set's, each call run by
// exec (an executor for the same set).
func New(set runtime.ToolSet, exec *runtime.Executor, opts Options) *mcp.Server {
	if opts.Name == "" {
		opts.Name = "keel"
	}
	if opts.Version == "" {
		opts.Version = runtime.Version
	}
	if opts.Context == nil {
		opts.Context = func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
			return runtime.ExecutionContext{}
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, nil)
	h := &handler{exec: exec, context: opts.Context}
	for _, t := range set.Tools() {
		s.AddTool(Tool(t.Info()), h.call)
	}
	return s
}

// Tool is the MCP description of a keel tool: keel's own schemas, and
// annotations set deliberately from its effect. A read tool is read-only
// and idempotent; a write tool may be destructive. keel tools are a
// closed, reviewed set, so none is open-world.
func Tool(info runtime.ToolInfo) *mcp.Tool {
	read := info.Effect == runtime.EffectRead
	destructive, openWorld := !read, false
	return &mcp.Tool{
		Name:         info.Name,
		Description:  info.Description,
		InputSchema:  json.RawMessage(info.InputSchema),
		OutputSchema: json.RawMessage(info.OutputSchema),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    read,
			DestructiveHint: &destructive,
			IdempotentHint:  read,
			OpenWorldHint:   &openWorld,
		},
	}
}

type handler struct {
	exec    *runtime.Executor
	context ContextFunc
	calls   atomic.Uint64
}

// call runs one tools/call through the executor.
func (h *handler) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	call := runtime.ToolCall{
		ID:        fmt.Sprintf("mcp-%d", h.calls.Add(1)),
		Name:      req.Params.Name,
		Arguments: req.Params.Arguments,
	}
	r := h.exec.Execute(ctx, h.context(ctx, req), call)
	switch {
	case r.Code() == runtime.CodeUnknownTool:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: r.Error.Message}
	case !r.OK:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: schemajson.ResultContent(r)}}}, nil
	default:
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(r.Data),
			Content:           []mcp.Content{&mcp.TextContent{Text: string(r.Data)}},
		}, nil
	}
}

// ServeStdio serves s on standard input and output until the client hangs
// up or ctx ends.
func ServeStdio(ctx context.Context, s *mcp.Server) error {
	return s.Run(ctx, &mcp.StdioTransport{})
}

// HTTPHandler serves s over Streamable HTTP.
func HTTPHandler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}
