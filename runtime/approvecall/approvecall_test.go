package approvecall_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/approvecall"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// A call the policy sends for approval runs only with a grant the Approver
// returns, and the grant runs it once: nil, "", an error and a replayed
// grant all leave it approval_required, and its handler does not run.
func TestRunAsksOnceAndRunsOnce(t *testing.T) {
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(id string) runtime.ToolCall {
		return runtime.ToolCall{ID: id, Name: frameworktest.Ticket, Arguments: []byte(`{"id":"INC-1","summary":"restart"}`)}
	}
	var last string
	approve := func(ctx context.Context, req runtime.ApprovalRequest) (string, error) {
		if !strings.Contains(req.Question, `summary: "restart"`) || !strings.Contains(req.Question, `id: "INC-1"`) {
			t.Errorf("the Approver's question is not the whole call:\n%s", req.Question)
		}
		g, err := fx.Approve(ctx, req)
		last = g
		return g, err
	}
	replay := func(context.Context, runtime.ApprovalRequest) (string, error) { return last, nil }
	for _, c := range []struct {
		name    string
		approve approvecall.Approver
		want    runtime.Code
		runs    int
	}{
		{"no approver", nil, runtime.CodeApprovalRequired, 0},
		{"no grant", func(context.Context, runtime.ApprovalRequest) (string, error) { return "", nil }, runtime.CodeApprovalRequired, 0},
		{"an error", func(context.Context, runtime.ApprovalRequest) (string, error) { return "g", errors.New("denied") }, runtime.CodeApprovalRequired, 0},
		{"a grant", approve, "", 1},
		{"the grant again", replay, runtime.CodeApprovalRequired, 1},
	} {
		r := approvecall.Run(ctx, fx.Exec, fx.Context(ctx), call("call-1"), c.approve)
		if r.Code() != c.want || fx.Runs(frameworktest.Ticket) != c.runs {
			t.Errorf("%s: code %q, ticket ran %d times; want %q, %d", c.name, r.Code(), fx.Runs(frameworktest.Ticket), c.want, c.runs)
		}
	}
}
