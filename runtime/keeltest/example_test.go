package keeltest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A hand-made tool, locked as keelgen would lock it, run through an
// executor: for trying a policy or an adapter without generating a set.
func ExampleLocked() {
	greet := runtime.NewTool(runtime.ToolInfo{Name: "greet", Version: "1", Effect: runtime.EffectRead, Description: "Greets a person.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],"properties":{"name":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Name string `json:"name"`
		}) (map[string]string, error) {
			return map[string]string{"greeting": "Hello, " + in.Name}, nil
		}))
	set, err := keeltest.Locked(greet)
	if err != nil {
		panic(err)
	}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c1", Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
	fmt.Println(r.OK, string(r.Data))
	// Output:
	// true {"greeting":"Hello, Ada"}
}
