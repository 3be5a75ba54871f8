package answercall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/answercall"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Code is the form the handler asks for: a one-time code.
type Code struct {
	Code string `json:"code"`
}

func (*Code) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"code":{"type":"string","minLength":6,"maxLength":6}},"required":["code"]}`)
}

func (c *Code) ReadElicit(content []byte) error { return ask.Decode(c.ElicitSchema(), content, c) }

// A harness answers the handler's question while the call waits: Run
// executes the call, gives each request to the Answerer, and runs the call
// again with the answers, until it ends.
func Example() {
	unlock := runtime.NewTool(runtime.ToolInfo{Name: "unlock_door", Version: "1", Effect: runtime.EffectRead, Description: "Unlocks the door.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			c, err := ask.Elicit[Code](ctx, "code", "Type the code sent to your phone.")
			if err != nil {
				return nil, err
			}
			return map[string]string{"unlocked_with": c.Code}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(unlock), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	person := func(_ context.Context, key string, r ask.Request) (json.RawMessage, error) {
		form, _ := r.Form()
		fmt.Printf("asked %s: %s\n", key, form.Message)
		return ask.AcceptForm(Code{Code: "428301"})
	}
	r := answercall.Run(context.Background(), exec, runtime.ExecutionContext{}, runtime.ToolCall{ID: "c1", Name: "unlock_door"}, ask.Elicitation, person)
	fmt.Println(r.OK, string(r.Data))
	// Output:
	// asked code: Type the code sent to your phone.
	// true {"unlocked_with":"428301"}
}
