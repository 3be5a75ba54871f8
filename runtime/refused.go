package runtime

import "context"

// Refused records a message a door refused before the executor saw a call
// in it, so that observers (the audit) see every refusal, not only those of
// the order. call holds what the door read (the request's id, the name it
// called; "" for what it could not read), and reason says why (one of the
// Refused constants, beside the codes). Nothing
// runs, and nothing is recorded without observers.
func (e *Executor) Refused(ctx context.Context, ec ExecutionContext, call ToolCall, reason string) {
	if len(e.observers) == 0 {
		return
	}
	obs, _ := e.begin(ctx, ec, call)
	obs.rec.Refusal = reason
	e.end(obs, ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeRefusedMessage}})
}
