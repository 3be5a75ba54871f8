package keeltemporal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/report"
)

// TaskWorkflowName is the workflow type a TaskRunner starts and
// RegisterTaskWorkflow registers: one call, run as keel's activity.
const TaskWorkflowName = "keel.Task"

// TaskRunner runs the calls of an MCP server's tasks (it is an
// mcpserver.TaskRunner, for mcpserver.Tasks's Runner) as Temporal workflows, so a task outlives the replica that took
// it: the call is keel's activity on a worker of Queue (Execute's
// defaults: a lost worker's call is retried elsewhere), and whichever
// replica a client polls reads the result from Temporal. Each run is one
// workflow whose id is the run's, started once: a second start of the same
// id, even after it ended, starts nothing.
type TaskRunner struct {
	Client client.Client
	// Queue is the task queue of the workflow and of its activity: a
	// worker there needs RegisterTaskWorkflow and Register.
	Queue string
	// Timeout bounds a run, start to end (default DefaultTaskTimeout).
	Timeout time.Duration
	// HeartbeatTimeout is how long the worker running a call may go silent
	// before Temporal retries the call on another (default
	// DefaultHeartbeatTimeout).
	HeartbeatTimeout time.Duration
}

// taskInput is a task workflow's input: the call, and how its activity
// runs.
type taskInput struct {
	Request
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
}

// DefaultTaskTimeout bounds a task's run when TaskRunner.Timeout is zero.
const DefaultTaskTimeout = 24 * time.Hour

// RegisterTaskWorkflow registers, on w, the workflow a TaskRunner starts.
func RegisterTaskWorkflow(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(taskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
}

// taskWorkflow runs one call, as Execute does, on the workflow's queue.
func taskWorkflow(ctx workflow.Context, in taskInput) (runtime.ToolResult, error) {
	if in.HeartbeatTimeout > 0 {
		ctx = workflow.WithHeartbeatTimeout(ctx, in.HeartbeatTimeout)
	}
	return Execute(ctx, in.Context, in.toolCall())
}

// StartTask starts the run's workflow; one that exists (running or ended)
// is left as it is.
func (r *TaskRunner) StartTask(ctx context.Context, run string, ec runtime.ExecutionContext, call runtime.ToolCall) error {
	if r.Client == nil || r.Queue == "" {
		return errors.New("keeltemporal: TaskRunner needs a Client and a Queue")
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTaskTimeout
	}
	_, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: run, TaskQueue: r.Queue, WorkflowExecutionTimeout: timeout,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, TaskWorkflowName, taskInput{Request: requestOf(ec, call), HeartbeatTimeout: r.HeartbeatTimeout})
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil
	}
	return err
}

// TaskResult reads the run's workflow: not done while it runs; its result
// once it completed; tool_cancelled when it was cancelled, and
// tool_internal_error when it failed, timed out or was terminated.
func (r *TaskRunner) TaskResult(ctx context.Context, run string) (runtime.ToolResult, bool, error) {
	res, done, _, err := r.TaskProgress(ctx, run)
	return res, done, err
}

// TaskProgress is TaskResult that, while the run's activity runs, also
// reads its handler's latest report.Progress from the worker's last
// heartbeat (mcpserver.TaskProgressRunner): the task's statusMessage then
// says it, as a task run on its replica does. One DescribeWorkflowExecution
// answers both.
func (r *TaskRunner) TaskProgress(ctx context.Context, run string) (runtime.ToolResult, bool, *report.ProgressEntry, error) {
	d, err := r.Client.DescribeWorkflowExecution(ctx, run, "")
	if err != nil {
		return runtime.ToolResult{}, false, nil, err
	}
	ended := runtime.ToolCall{ID: run}
	switch status := d.GetWorkflowExecutionInfo().GetStatus(); status {
	case enums.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return runtime.ToolResult{}, false, heartbeatProgress(d.GetPendingActivities()), nil
	case enums.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var res runtime.ToolResult
		if err := r.Client.GetWorkflow(ctx, run, "").Get(ctx, &res); err != nil {
			return runtime.ToolResult{}, false, nil, fmt.Errorf("keeltemporal: the result of run %q: %w", run, err)
		}
		return res, true, nil, nil
	case enums.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return ended.Ended("", runtime.CodeToolCancelled), true, nil, nil
	default:
		return ended.Ended("", runtime.CodeToolInternalError), true, nil, nil
	}
}

// heartbeatProgress is the progress the run's activity last heartbeat
// (a task workflow runs one activity at a time); nil for none.
func heartbeatProgress(pending []*workflowpb.PendingActivityInfo) *report.ProgressEntry {
	for _, a := range pending {
		details := a.GetHeartbeatDetails()
		if details == nil || len(details.GetPayloads()) == 0 {
			continue
		}
		var beat Heartbeat
		if converter.GetDefaultDataConverter().FromPayloads(details, &beat) == nil && beat.Progress != nil {
			return beat.Progress
		}
	}
	return nil
}

// CancelTask cancels the run's workflow, which cancels its activity: the
// handler's context ends.
func (r *TaskRunner) CancelTask(ctx context.Context, run string) error {
	return r.Client.CancelWorkflow(ctx, run, "")
}
