package keeltemporal

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/keelgen/keel/runtime"
)

// Execute runs call, from workflow code, as the keel activity under the
// activity options of ctx (zero timeouts and a missing retry policy take
// the Default values above), and returns its one result for the model:
// keel's answer, or, when Temporal gave up on the call (its retries ran
// out, its worker was lost past them), the last answer a worker gave, or
// tool_timeout or tool_internal_error with keel's fixed message. err is
// non-nil only when the call was cancelled (the result is tool_cancelled):
// return it, and the workflow ends cancelled.
//
// The call needs an id that no other call of the workflow shares (the
// provider's tool call id): a grant, the audit log and the handler's
// idempotency key all hold to it. One without an id is refused as
// invalid_arguments, before any activity is scheduled.
func Execute(ctx workflow.Context, ec runtime.ExecutionContext, call runtime.ToolCall) (runtime.ToolResult, error) {
	if call.ID == "" {
		workflow.GetLogger(ctx).Error("keel: a tool call without an id; refused", "tool_bytes", len(call.Name))
		return runtime.ToolResult{ToolName: call.Name, Error: &runtime.ToolError{Code: runtime.CodeInvalidArguments,
			Message: "The call has no call id."}}, nil
	}
	ctx = workflow.WithActivityOptions(ctx, withDefaults(workflow.GetActivityOptions(ctx)))
	var r runtime.ToolResult
	err := workflow.ExecuteActivity(ctx, ActivityName, requestOf(ec, call)).Get(ctx, &r)
	if err == nil {
		return r, nil
	}
	var (
		canceled *temporal.CanceledError
		timeout  *temporal.TimeoutError
		app      *temporal.ApplicationError
	)
	switch {
	case errors.As(err, &canceled):
		if !canceled.HasDetails() || canceled.Details(&r) != nil || r.Code() != runtime.CodeToolCancelled {
			r = call.Ended("", runtime.CodeToolCancelled)
		}
		return r, err
	case errors.As(err, &app) && app.HasDetails() && app.Details(&r) == nil && retried(r.Code()):
		return r, nil // the last try's own answer
	case errors.As(err, &timeout):
		var beat Heartbeat
		if timeout.HasLastHeartbeatDetails() {
			_ = timeout.LastHeartbeatDetails(&beat)
		}
		workflow.GetLogger(ctx).Warn("keel: the call timed out", "call_id", call.ID, "tool_version", beat.ToolVersion, "error", err)
		return call.Ended(beat.ToolVersion, runtime.CodeToolTimeout), nil
	default:
		workflow.GetLogger(ctx).Error("keel: the call's activity failed", "call_id", call.ID, "error", err)
		return call.Ended("", runtime.CodeToolInternalError), nil
	}
}

// withDefaults fills what o leaves zero.
func withDefaults(o workflow.ActivityOptions) workflow.ActivityOptions {
	if o.StartToCloseTimeout == 0 && o.ScheduleToCloseTimeout == 0 {
		o.StartToCloseTimeout = DefaultStartToCloseTimeout
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if o.RetryPolicy == nil {
		o.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: DefaultMaximumAttempts}
	}
	return o
}
