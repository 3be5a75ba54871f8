package runtime

import "context"

// Refusal says why a door refused a message before any stage of the order
// read a call from it: one of the constants below, which observers may key
// on.
type Refusal string

const (
	RefusedTooLarge       Refusal = "too_large"        // over the door's size cap
	RefusedNotJSON        Refusal = "not_json"         // not one JSON value
	RefusedBatch          Refusal = "batch"            // a JSON-RPC batch
	RefusedNotAMessage    Refusal = "not_a_message"    // JSON, but no JSON-RPC message
	RefusedDuplicate      Refusal = "duplicate_member" // a member named twice, at any level the door reads
	RefusedHeaderMismatch Refusal = "header_mismatch"  // a header about the call that disagrees with it
	RefusedProtocol       Refusal = "protocol"         // a call the protocol's rules refuse (its version, session or headers)
)

// Refused records a message a door refused before the executor saw a call
// in it, so that observers (the audit) see every refusal, not only those of
// the order. call holds what the door read (the request's id, the name it
// called; "" for what it could not read), and reason says why. Nothing
// runs, and nothing is recorded without observers.
func (e *Executor) Refused(ctx context.Context, ec ExecutionContext, call ToolCall, reason Refusal) {
	if len(e.observers) == 0 {
		return
	}
	obs, _ := e.begin(ctx, ec, call)
	obs.rec.Refusal = reason
	e.end(obs, ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeRefusedMessage}})
}
