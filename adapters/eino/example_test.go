package eino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	keeleino "github.com/keelgen/keel/adapters/eino"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// A ToolsNode of keel's tools: the model's calls in (an assistant
// message), keel's results out (tool messages); a name the set lacks is
// keel's unknown_tool, never an error that stops the graph.
func ExampleNodeConfig() {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	cfg, err := keeleino.NodeConfig(ctx, exec, keeleino.Options{})
	if err != nil {
		panic(err)
	}
	node, err := compose.NewToolNode(ctx, cfg)
	if err != nil {
		panic(err)
	}
	out, err := node.Invoke(ctx, &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{
		{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: generated.ToolLookupIncident, Arguments: `{"incident_id":"INC-001"}`}},
		{ID: "call_2", Type: "function", Function: schema.FunctionCall{Name: "delete_prod", Arguments: `{}`}},
	}})
	if err != nil {
		panic(err)
	}
	for _, m := range out {
		var r runtime.ToolResult // each tool message is keel's result JSON
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			panic(err)
		}
		outcome := "ok"
		if !r.OK {
			outcome = string(r.Code())
		}
		fmt.Println(m.ToolCallID, r.ToolName, outcome)
	}
	// Output:
	// call_1 lookup_incident ok
	// call_2 delete_prod unknown_tool
}
