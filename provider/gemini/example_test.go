package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/provider/gemini"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Function declarations out, a functionCall in, the functionResponse back,
// in Gemini's shapes; a call without an id gets the fallback the harness
// gives it, so its result still says which call it answers.
func Example() {
	weather := runtime.NewTool(runtime.ToolInfo{Name: "get_weather", Version: "1", Effect: runtime.EffectRead, Description: "Gets the weather in a city.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["city"],"properties":{"city":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			City string `json:"city"`
		}) (map[string]any, error) {
			return map[string]any{"city": in.City, "celsius": 21}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(weather), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	decls, err := gemini.Declarations(exec.ModelToolsFor(context.Background(), runtime.ExecutionContext{}), gemini.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(decls[0].Name, "-", decls[0].Description)

	r := exec.Execute(context.Background(), runtime.ExecutionContext{},
		gemini.Call(gemini.FunctionCall{Name: "get_weather", Args: json.RawMessage(`{"city":"Lisbon"}`)}, "turn-3-call-0"))
	resp := gemini.Result(r)
	fmt.Println(resp.ID, resp.Name, string(resp.Response))
	// Output:
	// get_weather - Gets the weather in a city.
	// turn-3-call-0 get_weather {"output":{"celsius":21,"city":"Lisbon"}}
}
