package cedarpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/cedar-policy/cedar-go"

	"github.com/keelgen/keel/cedarpolicy"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A Cedar policy decides each call on the arguments the handler would get:
// refunds up to 100 run; larger ones need a person's approval.
func Example() {
	policies, err := cedar.NewPolicySetFromBytes("refunds.cedar", []byte(`
permit (principal, action == Keel::Action::"refund", resource) when { context.args.amount <= 100 };
@approval("required")
permit (principal, action == Keel::Action::"refund", resource) when { context.args.amount > 100 };
`))
	if err != nil {
		panic(err)
	}
	refund := runtime.NewTool(runtime.ToolInfo{Name: "refund", Version: "1", Effect: runtime.EffectWrite, Description: "Refunds an amount.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["amount"],"properties":{"amount":{"type":"integer","minimum":1}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Amount int `json:"amount"`
		}) (map[string]int, error) {
			return map[string]int{"refunded": in.Amount}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(refund), runtime.WithPolicy(cedarpolicy.New(policies, cedarpolicy.Options{})),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	for _, args := range []string{`{"amount":40}`, `{"amount":400}`} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{Tenant: "acme", Principal: "alice"},
			runtime.ToolCall{ID: "c", Name: "refund", Arguments: json.RawMessage(args)})
		if r.OK {
			fmt.Println(args, "ran")
		} else {
			fmt.Println(args, r.Code())
		}
	}
	// Output:
	// {"amount":40} ran
	// {"amount":400} approval_required
}
