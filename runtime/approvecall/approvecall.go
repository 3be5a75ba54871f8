// Package approvecall runs one call for a framework adapter whose runner
// cannot stop for a person (Anthropic's tool runner, langchaingo's agents):
// when the policy sends the call for approval and the harness gave an
// Approver, the call waits while it is asked, and a grant runs the same call,
// by the same id, once more. A framework with its own human-in-the-loop
// mechanism (eino's and Genkit's interrupts) uses that instead.
package approvecall

import (
	"context"

	"github.com/keelgen/keel/runtime"
)

// Approver asks a person to approve req, while the call waits, and returns
// the grant (from grant.Issue). "" or an error leaves the call
// refused with approval_required.
type Approver func(ctx context.Context, req runtime.ApprovalRequest) (grant string, err error)

// Run executes call, asking approve for a grant when the policy sends it for
// approval; a nil approve never asks.
func Run(ctx context.Context, exec *runtime.Executor, ec runtime.ExecutionContext, call runtime.ToolCall, approve Approver) runtime.ToolResult {
	r := exec.Execute(ctx, ec, call)
	if approve == nil || r.Code() != runtime.CodeApprovalRequired || r.Error.Approval == nil {
		return r
	}
	grant, err := approve(ctx, *r.Error.Approval)
	if err != nil || grant == "" {
		return r
	}
	ec.Grant = grant
	return exec.Execute(ctx, ec, call)
}
