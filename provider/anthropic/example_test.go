package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Tools out, a tool_use in, a tool_result back: the loop a harness runs
// with Anthropic's Messages API, every call through the executor.
func Example() {
	lookup := runtime.NewTool(runtime.ToolInfo{Name: "lookup_order", Version: "1", Effect: runtime.EffectRead, Description: "Looks up an order.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["order_id"],"properties":{"order_id":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			OrderID string `json:"order_id"`
		}) (map[string]string, error) {
			return map[string]string{"order_id": in.OrderID, "status": "shipped"}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(lookup), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	tools, err := anthropic.Tools(exec.ModelToolsFor(context.Background(), runtime.ExecutionContext{}), anthropic.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(tools[0].Name, string(tools[0].InputSchema))

	// The model's tool_use block, from the response.
	var use anthropic.ToolUse
	json.Unmarshal([]byte(`{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":{"order_id":"ORD-7"}}`), &use)
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, anthropic.Call(use))
	block := anthropic.Result(r) // the tool_result for the next request
	fmt.Println(block.ToolUseID, block.IsError, block.Content[0].Text)
	// Output:
	// lookup_order {"type":"object","additionalProperties":false,"required":["order_id"],"properties":{"order_id":{"type":"string"}}}
	// toolu_1 false {"call_id":"toolu_1","tool_name":"lookup_order","tool_version":"1","ok":true,"data":{"order_id":"ORD-7","status":"shipped"},"error":null}
}
