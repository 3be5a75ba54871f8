package frameworktest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// An adapter's test plays the scripted steps through its framework's own
// runner and checks what the model reads. Here the "framework" hands each
// step straight to the executor and the model reads keel's result JSON;
// the write that needs approval reads approval_required, since no person
// approved it, and so never runs.
func Example() {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		panic(err)
	}
	for i, step := range frameworktest.Steps() {
		call := runtime.ToolCall{ID: fmt.Sprint("call-", i), Name: step.Tool, Arguments: json.RawMessage(step.Arguments)}
		r := fx.Exec.Execute(ctx, fx.Context(ctx), call)
		text, _ := json.Marshal(r)
		if msg := frameworktest.Check(step, string(text)); msg != "" {
			fmt.Println(msg)
			continue
		}
		fmt.Printf("%s: %q\n", step.Name, r.Code())
	}
	fmt.Println("the write ran:", fx.Runs(frameworktest.Ticket))
	// Output:
	// valid: ""
	// invalid: "invalid_arguments"
	// unknown: "unknown_tool"
	// business: "not_found"
	// approval: "approval_required"
	// panic: "tool_internal_error"
	// the write ran: 0
}
