package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// brokenLimiter cannot decide.
type brokenLimiter struct{}

func (brokenLimiter) Take(context.Context, string, runtime.RateLimit) (bool, time.Duration, error) {
	return false, 0, errors.New("store down")
}

// A caller over its limit is refused as rate_limit_exceeded, with when to
// try again, before its arguments are read; another caller is not; a
// tool's own limit holds beside the caller's; a limiter that cannot decide
// refuses; nothing refused runs, and the audit records each.
func TestRateLimitsPerCallerAndTool(t *testing.T) {
	var ran atomic.Int32
	tool := func(name string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil }))
	}
	set := keeltest.Of(tool("lookup"), tool("export"))
	var audit strings.Builder
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: memstore.NewRateLimiter(),
			PerCaller: runtime.RateLimit{Calls: 3, Per: time.Hour},
			PerTool:   map[string]runtime.RateLimit{"export": {Calls: 1, Per: time.Hour}}}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(ec runtime.ExecutionContext, name, args string) runtime.ToolResult {
		return exec.Execute(ctx, ec, runtime.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
	}
	ann := runtime.ExecutionContext{Tenant: "acme", Principal: "ann"}
	bob := runtime.ExecutionContext{Tenant: "acme", Principal: "bob"}
	if r := call(ann, "export", `{}`); !r.OK {
		t.Fatalf("ann's first export: %+v", r.Error)
	}
	if r := call(ann, "export", `{}`); r.Code() != runtime.CodeRateLimitExceeded || !strings.Contains(r.Error.Message, "try again in 3600 s") {
		t.Errorf("ann's second export, over the tool's limit: %+v", r.Error)
	}
	if r := call(ann, "lookup", `{}`); !r.OK { // the refused export took its token from ann's 3 too
		t.Errorf("ann's third call, the last of the caller's 3: %+v", r.Error)
	}
	if r := call(ann, "lookup", `not json`); r.Code() != runtime.CodeRateLimitExceeded {
		t.Errorf("over the caller's limit, the arguments were read: %+v", r.Error)
	}
	if r := call(bob, "lookup", `{}`); !r.OK {
		t.Errorf("bob is limited by ann's calls: %+v", r.Error)
	}
	if r := call(ann, "no_such_tool", `{}`); r.Code() != runtime.CodeUnknownTool {
		t.Errorf("an unknown name: %+v", r.Error)
	}
	if ran.Load() != 3 {
		t.Errorf("the handlers ran %d times, want 3", ran.Load())
	}
	if n := strings.Count(audit.String(), `"code":"rate_limit_exceeded"`); n != 2 {
		t.Errorf("%d audit records of rate_limit_exceeded, want 2:\n%s", n, audit.String())
	}

	broken, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: brokenLimiter{}, PerCaller: runtime.RateLimit{Calls: 100, Per: time.Second}}))
	if err != nil {
		t.Fatal(err)
	}
	if r := broken.Execute(ctx, ann, runtime.ToolCall{ID: "c", Name: "lookup", Arguments: json.RawMessage(`{}`)}); r.Code() != runtime.CodeRateLimitExceeded || strings.Contains(r.Error.Message, "store down") {
		t.Errorf("a limiter that cannot decide: %+v", r.Error)
	}

	for _, bad := range []runtime.RateLimits{
		{PerCaller: runtime.RateLimit{Calls: 1, Per: time.Second}},
		{Limiter: memstore.NewRateLimiter()},
		{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Second}, PerTool: map[string]runtime.RateLimit{"lookup": {}}},
		{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Second}, PerTool: map[string]runtime.RateLimit{"lookpu": {Calls: 1, Per: time.Second}}},
	} {
		if _, err := runtime.NewExecutor(set, runtime.WithRateLimits(bad)); err == nil || !strings.Contains(err.Error(), "WithRateLimits") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// Two executors that share one memstore.RateLimiter under different limits
// keep apart buckets: neither resets the other's, so 40 calls alternating
// between them run 1 + 2 times in the hour, not 40.
func TestSharedMemoryLimiterKeepsEachLimit(t *testing.T) {
	var ran atomic.Int32
	set := keeltest.Of(runtime.NewTool(runtime.ToolInfo{Name: "lookup", Version: "1", Effect: runtime.EffectRead, Description: "lookup",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil })))
	shared := memstore.NewRateLimiter()
	var execs []*runtime.Executor
	for _, calls := range []int{1, 2} {
		exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithRateLimits(runtime.RateLimits{Limiter: shared, PerCaller: runtime.RateLimit{Calls: calls, Per: time.Hour}}))
		if err != nil {
			t.Fatal(err)
		}
		execs = append(execs, exec)
	}
	ec := runtime.ExecutionContext{Tenant: "acme", Principal: "ann"}
	for i := range 40 {
		execs[i%2].Execute(context.Background(), ec, runtime.ToolCall{ID: "c", Name: "lookup", Arguments: json.RawMessage(`{}`)})
	}
	if ran.Load() != 3 {
		t.Fatalf("%d of 40 calls ran under limits of 1 and 2 an hour", ran.Load())
	}
}

// Admit answers a call to run later (a task) at once: the caller's scopes
// and rate, taken then; the run that carries RateTaken is not limited
// again, and a refusal is audited with nothing run.
func TestAdmitTakesTheRateOnce(t *testing.T) {
	var ran atomic.Int32
	tool := runtime.NewTool(runtime.ToolInfo{Name: "export", Version: "1", Effect: runtime.EffectRead, Description: "export", Scopes: []string{"files:read"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil }))
	var audit strings.Builder
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Hour}}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := runtime.ToolCall{ID: "c", Name: "export", Arguments: json.RawMessage(`{}`)}
	ann := runtime.ExecutionContext{Tenant: "acme", Principal: "ann", Scopes: []string{"files:read"}}
	if r := exec.Admit(ctx, runtime.ExecutionContext{Tenant: "acme", Principal: "ann"}, call); r == nil || r.Code() != runtime.CodeInsufficientScope {
		t.Fatalf("without the scope: %+v", r)
	}
	if r := exec.Admit(ctx, ann, call); r != nil {
		t.Fatalf("the first: %+v", r.Error)
	}
	if r := exec.Admit(ctx, ann, call); r == nil || r.Code() != runtime.CodeRateLimitExceeded {
		t.Fatalf("the second, over the rate: %+v", r)
	}
	if r := exec.Admit(ctx, ann, runtime.ToolCall{ID: "d", Name: "nope"}); r == nil || r.Code() != runtime.CodeUnknownTool {
		t.Fatalf("an unknown name: %+v", r)
	}
	admitted := ann
	admitted.RateTaken = true
	if r := exec.Execute(ctx, admitted, call); !r.OK {
		t.Fatalf("the admitted call's run: %+v", r.Error)
	}
	if r := exec.Execute(ctx, ann, call); r.Code() != runtime.CodeRateLimitExceeded {
		t.Fatalf("a call not admitted: %+v", r.Error)
	}
	if ran.Load() != 1 {
		t.Fatalf("the handler ran %d times", ran.Load())
	}
	for _, code := range []string{"insufficient_scope", "rate_limit_exceeded", "unknown_tool"} {
		if !strings.Contains(audit.String(), `"code":"`+code+`"`) {
			t.Errorf("no audit record of the refusal %s:\n%s", code, audit.String())
		}
	}
}
