package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// A recursive argument type is read to any depth the executor's MaxDepth
// allows and refused past it; a result that is a cycle of pointers is
// invalid_tool_output (the writer counts levels), never a crash.
func TestRecursiveTypesAreBounded(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	call := func(args string) runtime.ToolResult {
		return exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "q", Name: generated.ToolQuery, Arguments: json.RawMessage(args)})
	}
	nested := func(levels int) string {
		return `{"where":` + strings.Repeat(`{"not":`, levels) + `{"field":"a"}` + strings.Repeat(`}`, levels) + `}`
	}
	// {"where": + levels of not + the leaf: levels+2 objects deep.
	limit := runtime.DefaultLimits().MaxDepth
	if r := call(nested(limit - 2)); !r.OK || strings.Count(string(r.Data), `{"not":`) != limit-2 {
		t.Fatalf("%d levels deep: %s %s", limit, r.Code(), r.Data)
	}
	if r := call(nested(limit - 1)); r.Code() != runtime.CodeInvalidArguments || r.Error.Details[0].Keyword != "maxDepth" {
		t.Fatalf("%d levels deep: %+v", limit+1, r.Error)
	}
	if r := call(`{"where":{"field":"a"},"loop":true}`); r.Code() != runtime.CodeInvalidToolOutput || r.Data != nil {
		t.Fatalf("a cycle: %+v", r)
	}
}

// A result of a map or a slice type that contains itself is written to a
// bounded depth too: a graph with a cycle from the model's edges, and a
// list that holds itself, are invalid_tool_output, never a stack overflow
// (which no recover stops). The same types without a cycle are written.
func TestRecursiveMapsAndSlicesAreBounded(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	call := func(args string) runtime.ToolResult {
		return exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "l", Name: generated.ToolLinkNodes, Arguments: json.RawMessage(args)})
	}
	if r := call(`{"edges":[{"from":"a","to":"b"},{"from":"b","to":"c"}]}`); !r.OK || string(r.Data) != `{"graph":{"a":{"b":{"c":{}}},"b":{"c":{}},"c":{}},"nesting":[]}` {
		t.Fatalf("a graph without a cycle: %s %s", r.Code(), r.Data)
	}
	for _, args := range []string{
		`{"edges":[{"from":"a","to":"a"}]}`,
		`{"edges":[{"from":"a","to":"b"},{"from":"b","to":"a"}]}`,
		`{"edges":[],"nest":true}`,
	} {
		if r := call(args); r.Code() != runtime.CodeInvalidToolOutput || r.Data != nil {
			t.Errorf("%s: %+v", args, r)
		}
	}
}
