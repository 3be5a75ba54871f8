package keelgenkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	keelgenkit "github.com/keelgen/keel/adapters/genkit"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// keel's tools as Genkit tools (ai.WithTools(tools...) in a Generate):
// each run is the model's arguments through keel, its output keel's result
// JSON, a refusal included (Genkit ends a whole Generate on a tool's error).
func ExampleTools() {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	tools, err := keelgenkit.Tools(context.Background(), exec, keelgenkit.Options{})
	if err != nil {
		panic(err)
	}
	for _, ref := range tools {
		t, ok := ref.(interface {
			Name() string
			RunRaw(ctx context.Context, input any) (any, error)
		})
		if !ok || t.Name() != generated.ToolLookupIncident {
			continue
		}
		for _, input := range []map[string]any{{"incident_id": "INC-001"}, {"incident_id": 42}} {
			out, err := t.RunRaw(context.Background(), input)
			if err != nil {
				panic(err)
			}
			b, _ := json.Marshal(out)
			var r runtime.ToolResult
			if err := json.Unmarshal(b, &r); err != nil {
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
