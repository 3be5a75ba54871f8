package keeltemporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	keeltemporal "github.com/keelgen/keel/adapters/temporal"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// oneCall is a workflow of one tool call.
func oneCall(ctx workflow.Context, call runtime.ToolCall) (runtime.ToolResult, error) {
	return keeltemporal.Execute(ctx, runtime.ExecutionContext{Tenant: "demo", Principal: "you"}, call)
}

// Temporal's in-process test environment runs keel's activity as a worker
// does: the fastest way to try a workflow that calls tools, no server.
func TestInTemporalsTestEnvironment(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	if err := keeltemporal.Register(env, exec, keeltemporal.Options{}); err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(oneCall, runtime.ToolCall{ID: "c-1", Name: generated.ToolLookupIncident, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
	var r runtime.ToolResult
	if err := env.GetWorkflowResult(&r); err != nil || !r.OK || !strings.Contains(string(r.Data), `"INC-001"`) {
		t.Fatalf("%+v, %v", r, err)
	}
}

// The demo command runs one call against a Temporal server, as
// docs/durable.md says to try it with a dev server.
func TestDemoAgainstADevServer(t *testing.T) {
	temporalClient(t) // skips without the dev server
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "run", "./cmd/keel-temporal-demo", "-temporal", hostPort, "-queue", "demo-q").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"tool_name": "lookup_incident"`) || !strings.Contains(string(out), `"ok": true`) {
		t.Fatalf("%v:\n%s", err, out)
	}
}

// A workflow that calls a tool: keeltemporal.Execute runs keel's activity,
// so the call is retried elsewhere if its worker is lost, and the same
// executor decides it. Here Temporal's in-process test environment stands
// in for a server and a worker.
func ExampleExecute() {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	if err := keeltemporal.Register(env, exec, keeltemporal.Options{}); err != nil {
		panic(err)
	}
	env.ExecuteWorkflow(oneCall, runtime.ToolCall{ID: "c-1", Name: generated.ToolLookupIncident, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
	var r runtime.ToolResult
	if err := env.GetWorkflowResult(&r); err != nil {
		panic(err)
	}
	fmt.Println(r.ToolName, r.OK)
	// Output:
	// lookup_incident true
}
