package ask_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Size is a form: which size the person wants. Its methods are written by
// hand here; for a type of a handler package keelgen reads, go generate
// writes its form.
type Size struct {
	Size string `json:"size"`
}

func (*Size) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"size":{"type":"string","enum":["S","M","L"]}},"required":["size"]}`)
}

func (s *Size) ReadElicit(content []byte) error { return ask.Decode(s.ElicitSchema(), content, s) }

// A harness answers a handler's question: the first round is
// input_required with the request; the same call, sent again with the
// answer, runs the handler to the end with the size read into its type.
func Example() {
	order := runtime.NewTool(runtime.ToolInfo{Name: "order_shirt", Version: "1", Effect: runtime.EffectRead, Description: "Orders a shirt.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			size, err := ask.Elicit[Size](ctx, "size", "Which size?")
			if err != nil {
				return nil, err // ask.ErrAsked: the call is input_required
			}
			return map[string]string{"ordered": size.Size}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(order), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	call := runtime.ToolCall{ID: "c1", Name: "order_shirt", Accepts: ask.Elicitation}
	first := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
	fmt.Println(first.Code(), first.Error.Input["size"].Method)

	answer, err := ask.AcceptForm(Size{Size: "M"}) // {"action":"accept","content":{"size":"M"}}
	if err != nil {
		panic(err)
	}
	call.Answers = map[string]json.RawMessage{"size": answer}
	second := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
	fmt.Println(second.OK, string(second.Data))
	// Output:
	// input_required elicitation/create
	// true {"ordered":"M"}
}
