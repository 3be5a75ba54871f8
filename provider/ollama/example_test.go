package ollama_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/provider/ollama"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Tools out, a tool call in, the tool message back, in Ollama's /api/chat
// shapes.
func Example() {
	add := runtime.NewTool(runtime.ToolInfo{Name: "add", Version: "1", Effect: runtime.EffectRead, Description: "Adds two integers.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (map[string]int, error) {
			return map[string]int{"sum": in.A + in.B}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(add), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	tools, err := ollama.Tools(exec.ModelToolsFor(context.Background(), runtime.ExecutionContext{}), ollama.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(tools[0].Type, tools[0].Function.Name)

	var tc ollama.ToolCall
	json.Unmarshal([]byte(`{"function":{"name":"add","arguments":{"a":2,"b":1.5}}}`), &tc) // 1.5 is no integer
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, ollama.Call(tc, "call-1"))
	msg := ollama.Result(r)
	fmt.Println(msg.Role, msg.ToolName, r.Code())
	// Output:
	// function add
	// tool add invalid_arguments
}
