package runtime

import "context"

// Admit answers now, for a call that will run later (an MCP task), the
// stages of the order that come before its arguments are read: registered
// and visible, scopes, rate. It returns nil when the call may be accepted,
// its caller's rate taken; the run must then carry ec.RateTaken, so that
// the rate is taken once. A refusal is the call's one result, observed as
// Execute's are (the audit record), and nothing runs.
func (e *Executor) Admit(ctx context.Context, ec ExecutionContext, call ToolCall) *ToolResult {
	r, ok := e.admit(ctx, ec, call)
	if ok {
		return nil
	}
	if len(e.observers) > 0 {
		obs, _ := e.begin(ctx, ec, call)
		e.end(obs, r)
	}
	return &r
}

// admit runs execute's first stages, unobserved.
func (e *Executor) admit(ctx context.Context, ec ExecutionContext, call ToolCall) (ToolResult, bool) {
	unknown := func() (ToolResult, bool) {
		return ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessageFor(ctx, ec)}}, false
	}
	tool := e.set.Lookup(call.Name)
	if tool == nil || !e.dispatchable(tool, call.Name) {
		e.logUnknown(ctx, call.ID, len(call.Name), tool)
		return unknown()
	}
	if e.filter != nil && !e.kept(ctx, ec, tool) {
		return unknown()
	}
	c := newCallRun(e, ctx, call, tool, nil)
	if len(c.info.Scopes) > 0 && !c.scoped(ec) {
		return c.result, false
	}
	if e.rates != nil && !ec.RateTaken && c.limited(ec) {
		return c.result, false
	}
	return ToolResult{}, true
}
