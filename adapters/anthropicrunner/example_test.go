package anthropicrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// The runner's tools: each Execute is a tool_use's input through keel; a
// success is keel's result JSON as the tool_result's text, and a failure an
// error whose text is keel's result JSON, which the runner sends as an
// is_error tool_result.
func ExampleTools() {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	tools, err := anthropicrunner.Tools(context.Background(), exec, anthropicrunner.Options{})
	if err != nil {
		panic(err)
	}
	for _, t := range tools {
		if t.Name() != generated.ToolLookupIncident {
			continue
		}
		for _, input := range []string{`{"incident_id":"INC-001"}`, `{"incident_id":"INC-404"}`} {
			blocks, err := t.Execute(context.Background(), json.RawMessage(input))
			if err != nil {
				var r runtime.ToolResult
				json.Unmarshal([]byte(err.Error()), &r)
				fmt.Println("is_error", r.Code())
				continue
			}
			fmt.Println("tool_result", len(blocks), "block")
		}
	}
	// Output:
	// tool_result 1 block
	// is_error incident_not_found
}
