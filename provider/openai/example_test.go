package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Tools out, a tool call in, the tool message back, in Chat Completions'
// shapes: strict mode makes the optional member required but nullable for
// the model, and reads its null as absent again.
func Example() {
	search := runtime.NewTool(runtime.ToolInfo{Name: "search_orders", Version: "1", Effect: runtime.EffectRead, Description: "Searches orders.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["customer"],` +
			`"properties":{"customer":{"type":"string"},"status":{"type":"string","enum":["open","shipped"]}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Customer string `json:"customer"`
			Status   string `json:"status,omitempty"`
		}) (map[string]string, error) {
			return map[string]string{"customer": in.Customer, "status": in.Status}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(search), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	adapter := openai.New(exec.ModelToolsFor(context.Background(), runtime.ExecutionContext{}), openai.Options{Strict: true})
	def := adapter.ChatTools()[0].Function
	fmt.Println(def.Name, def.Strict, string(def.Parameters))

	// The model's tool call, from the response's message.
	var tc openai.ChatToolCall
	json.Unmarshal([]byte(`{"id":"call_1","type":"function","function":{"name":"search_orders","arguments":"{\"customer\":\"ACME\",\"status\":null}"}}`), &tc)
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, adapter.ChatCall(tc))
	msg := openai.ChatResult(r) // the "tool" message for the next request
	fmt.Println(msg.Role, msg.ToolCallID, msg.Content)
	// Output:
	// search_orders true {"type":"object","additionalProperties":false,"required":["customer","status"],"properties":{"customer":{"type":"string"},"status":{"type":["string","null"],"enum":["open","shipped",null]}}}
	// tool call_1 {"call_id":"call_1","tool_name":"search_orders","tool_version":"1","ok":true,"data":{"customer":"ACME","status":""},"error":null}
}
