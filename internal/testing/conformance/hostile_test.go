package conformance_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/internal/testing/conformance"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/testing/hostile"
	"github.com/keelgen/keel/internal/testing/leakcheck"
	"github.com/keelgen/keel/runtime"
)

// The hostile catalog through the generated reader: every row is
// invalid_arguments, leaks nothing, and reaches neither the policy nor the
// handler; its valid twin passes, so each row fails for its own reason.
func TestHostileArgumentsCatalog(t *testing.T) {
	var policyCalls atomic.Int32
	counting := runtime.PolicyFunc(func(ctx context.Context, req runtime.PolicyRequest) runtime.Decision {
		policyCalls.Add(1)
		return runtime.SideEffectPolicy{}.Decide(ctx, req)
	})
	exec, err := generated.NewExecutor(runtime.WithPolicy(counting), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	before := conformance.Calls.Load()
	for _, c := range hostile.Arguments {
		var args json.RawMessage
		if c.Name != "absent" {
			args = json.RawMessage(c.Args)
		}
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: generated.ToolProbe, Arguments: args})
		if r.Code() != runtime.CodeInvalidArguments || r.ToolVersion == nil || r.Data != nil {
			t.Errorf("%s: code %q", c.Name, r.Code())
		}
		if err := leakcheck.Check(r); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if n, m := conformance.Calls.Load()-before, policyCalls.Load(); n != 0 || m != 0 {
		t.Fatalf("hostile arguments reached the handler %d times and the policy %d times", n, m)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{},
		runtime.ToolCall{ID: "ok", Name: generated.ToolProbe, Arguments: json.RawMessage(`{"incident_id":"INC-001","count":9007199254740993,"small":-128,"ratio":5}`)})
	if !r.OK || string(r.Data) != `{"incident_id":"INC-001","count":9007199254740993,"small":-128,"ratio":5}` {
		t.Fatalf("valid twin: %+v %s", r.Error, r.Data)
	}
}

// Hostile names never select a generated tool.
func TestHostileNamesCatalog(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(hostile.Names, "Probe", "probe ", "PROBE") {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "n", Name: name, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
		if r.Code() != runtime.CodeUnknownTool || r.ToolVersion != nil {
			t.Errorf("%.30q: %+v", name, r.Error)
		}
	}
}
