package runtime

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime/ask"
)

// Code is a stable, machine-readable error code in a ToolResult.
type Code string

// The executor's own codes. A handler's business failure carries a code of
// its own (see Fail); it may not use one of these.
const (
	CodeUnknownTool       Code = "unknown_tool"
	CodeInvalidArguments  Code = "invalid_arguments"
	CodeApprovalRequired  Code = "approval_required"
	CodeToolInternalError Code = "tool_internal_error"
	CodeInvalidToolOutput Code = "invalid_tool_output"
	CodeToolTimeout       Code = "tool_timeout"
	// CodeToolCancelled: the caller went away (its context ended, an MCP
	// client's notifications/cancelled) before the handler finished.
	CodeToolCancelled Code = "tool_cancelled"
	// CodeInsufficientScope: the caller's credentials lack a scope the tool
	// declares (scopes=); nothing ran. The message names the scopes to ask
	// for.
	CodeInsufficientScope Code = "insufficient_scope"
	// CodeRateLimitExceeded: the caller is over a rate limit
	// (WithRateLimits), or the limiter could not decide; nothing ran. The
	// message says when to try again.
	CodeRateLimitExceeded Code = "rate_limit_exceeded"
	// CodeRefusedMessage is only ever an audit record's (Executor.Refused):
	// a door refused the message the call came in before any stage of the
	// order read it (a batch, a member named twice, a header that
	// disagrees with the call); the client got its transport's error, and
	// nothing ran.
	CodeRefusedMessage Code = "refused_message"
	// CodeInputRequired: the handler asked its caller's client for
	// answers (package ask); Error.Input holds the requests, by key. The
	// call runs again, from the start, with ToolCall.Answers.
	CodeInputRequired Code = "input_required"
	// CodeInputUnavailable: the handler needs to ask something the
	// caller's client cannot answer (ToolCall.Accepts lacks its kind).
	CodeInputUnavailable Code = "input_unavailable"
	// CodeCallInProgress: a write's call id is running now (WithOutcomes);
	// nothing ran again. RetryAfterSeconds says when its result may be
	// recorded.
	CodeCallInProgress Code = "call_in_progress"
	// CodeCallIDReused: a write's call id was used for a call with other
	// arguments (WithOutcomes); nothing ran.
	CodeCallIDReused Code = "call_id_reused"
	// CodeIdempotencyUnchecked: whether a write's call id already ran could
	// not be checked (its OutcomeStore did not answer); nothing ran.
	CodeIdempotencyUnchecked Code = "idempotency_unchecked"

	// Why a door refused a message (CallRecord.Refusal, Executor.Refused),
	// in words observers may key on.
	RefusedTooLarge       = "too_large"        // over the door's size cap
	RefusedTooSlow        = "too_slow"         // not read whole within the door's deadline
	RefusedBusy           = "busy"             // past the door's cap on calls running at once
	RefusedDraining       = "draining"         // the server shuts down (mcpserver.Server.Shutdown)
	RefusedNotJSON        = "not_json"         // not one JSON value
	RefusedBatch          = "batch"            // a JSON-RPC batch
	RefusedNotAMessage    = "not_a_message"    // JSON, but no JSON-RPC message
	RefusedDuplicate      = "duplicate_member" // a member named twice, at any level the door reads
	RefusedHeaderMismatch = "header_mismatch"  // a header about the call that disagrees with it
	RefusedProtocol       = "protocol"         // a call the protocol's rules refuse (its version, session or headers)
)

var executorCodes = []Code{
	CodeUnknownTool, CodeInvalidArguments, CodeApprovalRequired,
	CodeToolInternalError, CodeInvalidToolOutput, CodeToolTimeout, CodeToolCancelled, CodeInsufficientScope, CodeRateLimitExceeded,
	CodeRefusedMessage, CodeInputRequired, CodeInputUnavailable,
	CodeCallInProgress, CodeCallIDReused, CodeIdempotencyUnchecked,
}

func isExecutorCode(c Code) bool {
	for _, e := range executorCodes {
		if e == c {
			return true
		}
	}
	return false
}

// ToolCall is one tool call as a model sent it. Every field is untrusted.
type ToolCall struct {
	// ID is the provider's call id; it is echoed in the result and keys the log.
	ID string `json:"call_id"`
	// Name selects the tool. It must match a registered tool name byte for byte.
	Name string `json:"name"`
	// Arguments must be a JSON object. Absent, blank or null arguments are
	// read as {} (MCP makes them optional): a tool whose schema accepts {}
	// runs, one with a required member refuses them as invalid_arguments.
	Arguments json.RawMessage `json:"arguments"`
	// Answers are the client's answers to the handler's input requests of
	// an earlier round (CodeInputRequired), by key; each ask reads and
	// checks its own. Accepts says which kinds of request the client can
	// answer (nil: none); an ask.Kinds is one.
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
	Accepts ask.Accepter               `json:"-"`
}

// ToolResult is the one result of every call. Its JSON form is the contract
// with the model:
//
//	{"call_id":..., "tool_name":..., "tool_version":..., "ok":..., "data":..., "error":...}
//
// tool_version is null when no registered tool matched, data is null on
// failure and error is null on success.
type ToolResult struct {
	CallID      string          `json:"call_id"`
	ToolName    string          `json:"tool_name"`
	ToolVersion *string         `json:"tool_version"`
	OK          bool            `json:"ok"`
	Data        json.RawMessage `json:"data"`
	// Content are the result's content blocks beyond data (images, audio,
	// resources), checked; absent for a tool that returns none.
	Content []Content  `json:"content,omitempty"`
	Error   *ToolError `json:"error"`
	// Text is the result's text in its author's words (a result type's
	// MCPText method), which an MCP client's text block carries instead of
	// Data's JSON; "" for none, and always for a result with untrusted
	// text. Not part of the JSON form: a model reads Data.
	Text string `json:"-"`
	// Untrusted are the JSON pointers into Data of text from outside the
	// system (members the output schema marks x-keel-untrusted), which a
	// model reads between marks (resultjson). Not part of the JSON form.
	Untrusted []string `json:"-"`
}

// ToolError is the error part of a failed ToolResult.
type ToolError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Details says where invalid arguments failed. It is set only for
	// invalid_arguments, and only by an executor made WithErrorDetails.
	Details []Detail `json:"details,omitempty"`
	// Input are the handler's input requests, by key: for input_required
	// those the caller's client answers, and the call is sent again with
	// ToolCall.Answers; for input_unavailable those it cannot.
	Input map[string]ask.Request `json:"input,omitempty"`
	// Approval identifies the exact call to approve. It is set only for
	// approval_required, by an executor made WithApprovals, when the policy
	// sent the call for approval.
	Approval *ApprovalRequest `json:"approval,omitempty"`
	// RetryAfterSeconds is when a rate_limit_exceeded, call_in_progress or
	// idempotency_unchecked call may be tried again, rounded up.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
	// LimitUnchecked: the call is rate_limit_exceeded because its limit
	// could not be checked (the limiter's store did not answer), not
	// because the caller reached it.
	LimitUnchecked bool `json:"limit_unchecked,omitempty"`
}

// Detail locates one reason for invalid_arguments, in terms of the public
// input schema only: Pointer (RFC 6901) names a place the schema declares,
// Keyword the schema keyword that failed ("pattern", "required",
// "additionalProperties", ...) or one of keel's own: "json" (not valid
// strict JSON), "maxBytes", "maxDepth". No value from the call is echoed
// but the names of members the schema does not declare, which the model
// sent: with them and what the schema says, a model repairs its call.
type Detail struct {
	Pointer string `json:"pointer"`
	Keyword string `json:"keyword"`
	// Schema is the failed keyword's value in the input schema at Pointer:
	// the bound crossed (100 for "maximum"), the type expected, the enum's
	// values, the pattern. Absent for keel's own keywords.
	Schema json.RawMessage `json:"schema,omitempty"`
	// For "additionalProperties": Unknown are the members sent that the
	// schema does not declare there (at most 8, each cut to 64 bytes),
	// Allowed the members it declares.
	Unknown []string `json:"unknown,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
}

// Code returns the result's error code, or "" when the call succeeded.
func (r ToolResult) Code() Code {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

// Ended is the result of call c that ended outside the executor, with no
// result it can deliver: a durable engine gave up on it (it timed out, its
// worker was lost, its retries ran out), it was cancelled before a worker
// answered, or its result was too large to carry (invalid_tool_output). It
// carries the executor's fixed message for code, which must be one of
// those four (any other is read as tool_internal_error); version is the
// tool's, "" when it is not known.
func (c ToolCall) Ended(version string, code Code) ToolResult {
	var msg string
	switch code {
	case CodeToolTimeout:
		msg = msgTimeout
	case CodeToolCancelled:
		msg = msgCancelled
	case CodeInvalidToolOutput:
		msg = msgInvalidOutput
	default:
		code, msg = CodeToolInternalError, msgInternal
	}
	r := ToolResult{CallID: c.ID, ToolName: c.Name, Error: &ToolError{Code: code, Message: msg}}
	if version != "" {
		r.ToolVersion = &version
	}
	return r
}
