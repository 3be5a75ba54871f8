package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/adapters/langchaingo"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// The tools an agent gets: each one's Call is the model's action input
// through keel, its observation keel's result JSON with its stable code,
// a failure included (an agent stops on a tool's error).
func ExampleTools() {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	tools, err := langchaingo.Tools(context.Background(), exec, langchaingo.Options{})
	if err != nil {
		panic(err)
	}
	for _, t := range tools {
		if t.Name() != generated.ToolLookupIncident {
			continue
		}
		for _, input := range []string{`{"incident_id":"INC-001"}`, `{"incident_id":42}`} {
			observation, err := t.Call(context.Background(), input)
			if err != nil {
				panic(err)
			}
			var r runtime.ToolResult
			if err := json.Unmarshal([]byte(observation), &r); err != nil {
				panic(err)
			}
			if r.OK {
				fmt.Println(t.Name(), "ok")
			} else {
				fmt.Println(t.Name(), r.Code())
			}
		}
	}
	// Output:
	// lookup_incident ok
	// lookup_incident invalid_arguments
}
