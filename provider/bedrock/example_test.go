package bedrock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/keelgen/keel/provider/bedrock"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// The tool configuration out, a toolUse in, the toolResult back, in the
// Converse API's shapes (aws-sdk-go-v2).
func Example() {
	stock := runtime.NewTool(runtime.ToolInfo{Name: "check_stock", Version: "1", Effect: runtime.EffectRead, Description: "Checks a product's stock.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["sku"],"properties":{"sku":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			SKU string `json:"sku"`
		}) (map[string]any, error) {
			return map[string]any{"sku": in.SKU, "in_stock": 12}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(stock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	cfg, err := bedrock.Tools(exec.ModelToolsFor(context.Background(), runtime.ExecutionContext{}), bedrock.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(*cfg.Tools[0].(*types.ToolMemberToolSpec).Value.Name)

	use := types.ToolUseBlock{ToolUseId: aws.String("tooluse_1"), Name: aws.String("check_stock"),
		Input: document.NewLazyDocument(map[string]any{"sku": "SKU-42"})}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, bedrock.Call(use))
	block, err := bedrock.Result(r, bedrock.Options{})
	if err != nil {
		panic(err)
	}
	result := block.(*types.ContentBlockMemberToolResult).Value
	text, _ := result.Content[0].(*types.ToolResultContentBlockMemberJson).Value.MarshalSmithyDocument()
	fmt.Println(*result.ToolUseId, result.Status, string(text))
	// Output:
	// check_stock
	// tooluse_1 success {"call_id":"tooluse_1","data":{"in_stock":12,"sku":"SKU-42"},"error":null,"ok":true,"tool_name":"check_stock","tool_version":"1"}
}
