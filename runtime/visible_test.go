package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// What a caller may call is what it is shown: a tool the harness's filter
// hides (a plan's) is absent from its list and unknown_tool when called,
// with a message that names only what it may call; a tool whose scopes it
// lacks is not listed, and a call to it is insufficient_scope. Nothing
// hidden runs; a filter that panics hides.
func TestToolsAreShownAndRunByWhoCalls(t *testing.T) {
	var ran atomic.Int32
	tool := func(name string, scopes ...string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name, Scopes: scopes,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil }))
	}
	plan := runtime.ToolFilter(func(_ context.Context, ec runtime.ExecutionContext, info runtime.ToolInfo) bool {
		if info.Name == "explode" {
			panic("a filter bug")
		}
		return info.Name != "forecast" || ec.Tenant == "paid"
	})
	exec, err := runtime.NewExecutor(keeltest.Of(tool("lookup"), tool("forecast"), tool("purge", "ops:admin"), tool("explode")),
		runtime.WithToolFilter(plan), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	free := runtime.ExecutionContext{Tenant: "free", Principal: "ann"}
	paid := runtime.ExecutionContext{Tenant: "paid", Principal: "bob", Scopes: []string{"ops:admin"}}
	names := func(ec runtime.ExecutionContext) string {
		var n []string
		for _, m := range exec.ModelToolsFor(ctx, ec) {
			n = append(n, m.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(free); got != "lookup" {
		t.Errorf("the free tenant is shown %s", got)
	}
	if got := names(paid); got != "forecast,lookup,purge" {
		t.Errorf("the paid tenant is shown %s", got)
	}
	run := func(ec runtime.ExecutionContext, name string) runtime.ToolResult {
		return exec.Execute(ctx, ec, runtime.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(`{}`)})
	}
	hidden, absent := run(free, "forecast"), run(free, "no_such_tool")
	if hidden.Code() != runtime.CodeUnknownTool || hidden.ToolVersion != nil || hidden.Error.Message != absent.Error.Message ||
		hidden.Error.Message != "No tool with that name is available. Available tools: lookup." {
		t.Errorf("a hidden tool: %+v %+v; an absent one: %+v", hidden, hidden.Error, absent.Error)
	}
	if r := run(free, "purge"); r.Code() != runtime.CodeInsufficientScope || !strings.Contains(r.Error.Message, "ops:admin") {
		t.Errorf("a tool whose scope the caller lacks: %+v", r.Error)
	}
	if r := run(free, "explode"); r.Code() != runtime.CodeUnknownTool {
		t.Errorf("a tool its filter panics on: %+v", r.Error)
	}
	if ran.Load() != 0 {
		t.Fatalf("a hidden tool ran %d times", ran.Load())
	}
	for _, name := range []string{"forecast", "purge", "lookup"} {
		if r := run(paid, name); !r.OK {
			t.Errorf("paid %s: %+v", name, r.Error)
		}
	}
	if _, err := runtime.NewExecutor(keeltest.Of(tool("lookup")), runtime.WithToolFilter(nil)); err == nil || !strings.Contains(err.Error(), "WithToolFilter") {
		t.Errorf("a nil filter: %v", err)
	}
}
