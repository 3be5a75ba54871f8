package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// The harness loop: the tools a model is shown, and one call it made run
// through the executor's fixed order to its one result. (keelgen writes
// the tool set and its NewExecutor; this one is made by hand.)
func Example() {
	greet := runtime.NewTool(runtime.ToolInfo{Name: "greet", Version: "1", Effect: runtime.EffectRead, Description: "Greets a person.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],"properties":{"name":{"type":"string","minLength":1}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Name string `json:"name"`
		}) (map[string]string, error) {
			return map[string]string{"text": "Hello, " + in.Name + "!"}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(greet), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ec := runtime.ExecutionContext{Principal: "alice"} // from your sign-in, never from the model
	for _, t := range exec.ModelToolsFor(context.Background(), ec) {
		fmt.Println(t.Name, "-", t.DescriptionForModel())
	}
	for _, args := range []string{`{"name":"Ada"}`, `{"name":""}`} {
		r := exec.Execute(context.Background(), ec, runtime.ToolCall{ID: "call-1", Name: "greet", Arguments: json.RawMessage(args)})
		if r.OK {
			fmt.Println("ok", string(r.Data))
		} else {
			fmt.Println("failed", r.Code())
		}
	}
	r := exec.Execute(context.Background(), ec, runtime.ToolCall{ID: "call-2", Name: "delete_everything", Arguments: json.RawMessage(`{}`)})
	fmt.Println(r.Code())
	// Output:
	// greet - Greets a person.
	// ok {"text":"Hello, Ada!"}
	// failed invalid_arguments
	// unknown_tool
}

// A write sent again under its call id is answered with what it did the
// first time: the handler runs once. (memstore keeps one process's
// outcomes; redisreplay.Store keeps them for every replica.)
func ExampleWithOutcomes() {
	charges := 0
	charge := runtime.NewTool(runtime.ToolInfo{Name: "charge", Version: "1", Effect: runtime.EffectWrite, Description: "Charges an account.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["cents"],"properties":{"cents":{"type":"integer"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Cents int `json:"cents"`
		}) (map[string]int, error) {
			charges++
			return map[string]int{"receipt": charges}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(charge), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithOutcomes(memstore.NewOutcomeStore(), 24*time.Hour))
	if err != nil {
		panic(err)
	}
	ec := runtime.ExecutionContext{Tenant: "acme", Principal: "ada", AllowSideEffects: true}
	call := runtime.ToolCall{ID: "pay-1", Name: "charge", Arguments: json.RawMessage(`{"cents":500}`)}
	first := exec.Execute(context.Background(), ec, call)
	again := exec.Execute(context.Background(), ec, call) // a retry after a lost answer
	call.Arguments = json.RawMessage(`{"cents":900}`)
	reused := exec.Execute(context.Background(), ec, call)
	fmt.Println(string(first.Data), string(again.Data), reused.Code(), charges)
	// Output:
	// {"receipt":1} {"receipt":1} call_id_reused 1
}
