package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

type graph map[string]graph

type nesting []nesting

// A tool bound by hand whose result contains itself (a map of itself, a
// list of itself) is invalid_tool_output, as a generated one's is: json
// v2 counts the levels and refuses a cycle, and the process goes on.
func TestHandBoundCyclesAreInvalidOutput(t *testing.T) {
	for name, result := range map[string]func() any{
		"map": func() any { g := graph{}; g["a"] = g; return g },
		"slice": func() any {
			n := make(nesting, 1)
			n[0] = n
			return n
		},
	} {
		tool := runtime.NewTool(runtime.ToolInfo{Name: "cycle", Version: "1.0", Effect: runtime.EffectRead, Description: "x",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{}`)},
			runtime.Handle(func(context.Context, struct{}) (any, error) { return result(), nil }))
		set, err := keeltest.Locked(tool)
		if err != nil {
			t.Fatal(err)
		}
		exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: "cycle", Arguments: json.RawMessage(`{}`)})
		if r.Code() != runtime.CodeInvalidToolOutput {
			t.Errorf("%s: %+v", name, r)
		}
	}
}
