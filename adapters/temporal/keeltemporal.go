// Package keeltemporal runs a keel tool set on Temporal: each tool call is
// one activity, so a call outlives the process that started it. Workflow
// code calls Execute; a worker registers the activity with Register and
// runs every call through the set's executor, in its one fixed order.
//
// What ends a call and what Temporal retries:
//
//   - keel's answer is final, and the activity completes with it: a result,
//     unknown_tool, invalid_arguments, insufficient_scope, a refused policy
//     or approval_required, a declared business error, invalid_tool_output.
//     A retry could only give the same answer, or run what was refused.
//   - tool_internal_error and tool_timeout fail the activity with a
//     retryable error, and so does a worker lost mid-call (it stops
//     heartbeating): the activity's retry policy decides, and the last
//     answer is the call's result when it gives up.
//   - cancelling the workflow or the activity ends the handler's context;
//     the call's result is tool_cancelled.
//
// Each try runs with ExecutionContext.Attempt set from the activity, so the
// audit log and traces follow one call across retries and workers, and a
// grant the first try redeemed is redeemed again by a retry of that same
// call, and by nothing else (the executor's replay store must be a
// runtime.ReplayStore shared by the workers: redisreplay's is). A
// handler makes its own side effect once-only with runtime.IdempotencyKey.
//
// This package is a module of its own, so that only its users have
// Temporal's SDK in their go.sum.
package keeltemporal

import (
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/report"
)

// ActivityName is the activity type a worker registers and Execute
// schedules. One worker (one task queue) serves one tool set.
const ActivityName = "keel.Execute"

// Engine is the name calls run here carry in ExecutionContext.Attempt.
const Engine = "temporal"

// Request is an activity's input: the call as the model sent it, and what
// the harness says about it. The worker sets ExecutionContext.Attempt from
// the activity and ignores any given here. Both are recorded in the
// workflow's history: encrypt it (a client.Options DataConverter with a
// codec) when arguments or grants must not rest there in the clear.
type Request struct {
	Context runtime.ExecutionContext `json:"context"`
	Call    runtime.ToolCall         `json:"call"`
	// Accepts are the kinds of input request the call's client answers
	// (runtime.ToolCall.Accepts, which is no data of its own): a handler
	// that asks gets input_required for them, input_unavailable for others.
	Accepts ask.Kinds `json:"accepts,omitempty"`
}

// toolCall is the call as the executor runs it: with the client's kinds,
// which the call's JSON does not carry.
func (r Request) toolCall() runtime.ToolCall {
	call := r.Call
	if r.Accepts != 0 {
		call.Accepts = r.Accepts
	}
	return call
}

// requestOf is the activity's input for call: its Accepts read once.
func requestOf(ec runtime.ExecutionContext, call runtime.ToolCall) Request {
	r := Request{Context: ec, Call: call}
	if call.Accepts != nil {
		r.Accepts = call.Accepts.Accepts()
	}
	return r
}

// Heartbeat is what a worker heartbeats while a handler runs: the tool's
// version, and the handler's last progress report, if any. Temporal shows
// it as the pending activity's heartbeat details.
type Heartbeat struct {
	ToolVersion string                `json:"tool_version,omitempty"`
	Progress    *report.ProgressEntry `json:"progress,omitempty"`
}

// Defaults Execute fills into activity options that leave them zero; a
// zero never turns a bound off.
const (
	// DefaultStartToCloseTimeout bounds one try, when neither it nor the
	// schedule-to-close timeout is set.
	DefaultStartToCloseTimeout = 10 * time.Minute
	// DefaultHeartbeatTimeout is how long a worker may go silent before
	// Temporal counts it lost and retries the call elsewhere.
	DefaultHeartbeatTimeout = 30 * time.Second
	// DefaultMaximumAttempts bounds the tries, when no retry policy is set
	// (Temporal's own default is unbounded).
	DefaultMaximumAttempts = 3
)

// Temporal refuses a payload above 2 MiB (the server's blob size limit,
// limit.blobSize.error). A worker's answer must fit, with its envelope.
const (
	MaxPayloadBytes       = 2 << 20
	DefaultMaxResultBytes = MaxPayloadBytes - 64<<10
)
