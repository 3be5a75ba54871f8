package cedarpolicy_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cedar-policy/cedar-go"

	"github.com/keelgen/keel/cedarpolicy"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// A Cedar rule on a union member matches the value the model sent, either
// alternative, and one on a Nullable member sees null as no member.
func TestCedarRulesOnUnionAndNullableMembers(t *testing.T) {
	set, err := cedar.NewPolicySetFromBytes("p.cedar", []byte(`
permit (principal, action, resource);
forbid (principal, action == Keel::Action::"union", resource) when { context.args has rows && context.args.rows == 100 };
forbid (principal, action == Keel::Action::"union", resource) when { context.args has rows && context.args.rows == "all" };
forbid (principal, action == Keel::Action::"union", resource) when { context.args.value == "drop" };
forbid (principal, action == Keel::Action::"clear", resource) when { context.args has limit && context.args.limit == 7 };
forbid (principal, action == Keel::Action::"clear", resource) when { !(context.args has label) && context.args.flag == true };
`))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := generated.NewExecutor(runtime.WithPolicy(cedarpolicy.New(set, cedarpolicy.Options{})), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, args string
		ok         bool
	}{
		{generated.ToolUnion, `{"value":"x","rows":100}`, false},
		{generated.ToolUnion, `{"value":"x","rows":"all"}`, false},
		{generated.ToolUnion, `{"value":"drop"}`, false},
		{generated.ToolUnion, `{"value":"x","rows":99}`, true},
		{generated.ToolUnion, `{"value":1}`, true},
		{generated.ToolClear, `{"flag":false,"limit":7}`, false},
		{generated.ToolClear, `{"flag":false,"limit":null}`, true},
		{generated.ToolClear, `{"flag":true,"label":null}`, false},
		{generated.ToolClear, `{"flag":true,"label":"a"}`, true},
	} {
		r := ex.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: c.tool, Arguments: []byte(c.args)})
		if r.OK != c.ok {
			t.Errorf("%s %s: ok %v (%s), want %v", c.tool, c.args, r.OK, r.Code(), c.ok)
		}
	}
}
