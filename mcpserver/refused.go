package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime"
)

// refused records, for the audit, a message the front refused before any
// call ran (runtime.Executor.Refused). Its caller is who Options.Context
// says for a call that names what the front read of the message; req
// carries the rest (the session, the token, the headers). m is nil when
// nothing was read.
func (h *handler) refused(ctx context.Context, req *mcp.CallToolRequest, m *front.Message, reason string) {
	if h == nil {
		return
	}
	defer func() {
		// The owner's Context hook reads a request it never saw a call
		// in: one that panics costs the record, not the connection.
		if p := recover(); p != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "keel: a panic while recording a refused message", slog.Any("panic", p))
		}
	}()
	call := runtime.ToolCall{ID: newCallID()}
	if m != nil && m.IsCall() {
		call.Name = m.CalledName()
		for _, mm := range m.MetaMembers {
			if id, ok := front.Unquote(mm.Value.Bytes(m.Raw)); ok && mm.Name == MetaCallID && id != "" && len(id) <= maxCallIDBytes {
				call.ID = id // the client's name for its call, as callIDOf reads it
			}
		}
	}
	req.Params = &mcp.CallToolParamsRaw{Name: call.Name}
	h.exec.Refused(ctx, h.context(ctx, req), call, reason)
}
