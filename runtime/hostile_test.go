package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/internal/testing/hostile"
	"github.com/keelgen/keel/internal/testing/leakcheck"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// probeArgs has a field of each kind the catalog attacks.
type probeArgs struct {
	ID    string  `json:"incident_id"`
	Count int     `json:"count,omitempty"`
	Small int8    `json:"small,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
}

const probeIn = `{"type":"object","properties":{
	"incident_id":{"type":"string","pattern":"^INC-[0-9]{3,}$"},
	"count":{"type":"integer"},"small":{"type":"integer"},"ratio":{"type":"number"}},
	"required":["incident_id"],"additionalProperties":false}`

// probeSet is a read tool and a write tool with the same input, counting
// handler calls and policy decisions.
type probeSet struct {
	keeltest.Set
	handlerCalls, policyCalls atomic.Int32
	exec                      *runtime.Executor
}

func newProbeSet(t testing.TB, opts ...runtime.Option) *probeSet {
	p := &probeSet{}
	handle := runtime.Handle(func(context.Context, probeArgs) (echoResult, error) {
		p.handlerCalls.Add(1)
		return echoResult{Text: "ok", Tags: []string{}, Level: "low"}, nil
	})
	for _, tool := range []struct {
		name   string
		effect runtime.Effect
	}{{"lookup_incident", runtime.EffectRead}, {"create_ticket", runtime.EffectWrite}} {
		p.List = append(p.List, runtime.NewTool(runtime.ToolInfo{Name: tool.name, Version: "1.0", Effect: tool.effect,
			Description: "probe", InputSchema: json.RawMessage(probeIn), OutputSchema: json.RawMessage(echoOut)}, handle))
	}
	counting := runtime.PolicyFunc(func(ctx context.Context, req runtime.PolicyRequest) runtime.Decision {
		p.policyCalls.Add(1)
		return runtime.SideEffectPolicy{}.Decide(ctx, req)
	})
	opts = append([]runtime.Option{runtime.WithPolicy(counting), runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	exec, err := runtime.NewExecutor(p.Set, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p.exec = exec
	return p
}

func assertNoLeak(t testing.TB, r runtime.ToolResult, unknownMessage string) {
	t.Helper()
	if err := leakcheck.Check(r, unknownMessage); err != nil {
		t.Error(err)
	}
}

func TestHostileArgumentsCatalog(t *testing.T) {
	p := newProbeSet(t)
	for _, tool := range []string{"lookup_incident", "create_ticket"} {
		for _, c := range hostile.Arguments {
			var args json.RawMessage
			if c.Name != "absent" {
				args = json.RawMessage(c.Args)
			}
			r := p.exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true}, runtime.ToolCall{ID: "h", Name: tool, Arguments: args})
			if r.Code() != runtime.CodeInvalidArguments || r.ToolVersion == nil || r.Data != nil {
				t.Errorf("%s / %s: code %q", tool, c.Name, r.Code())
			}
			assertNoLeak(t, r, "")
		}
	}
	if n, m := p.handlerCalls.Load(), p.policyCalls.Load(); n != 0 || m != 0 {
		t.Fatalf("hostile arguments reached the handler %d times and the policy %d times", n, m)
	}
	// The catalog's valid twin passes, so the rows fail for their own reason.
	r := p.exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true},
		runtime.ToolCall{ID: "ok", Name: "create_ticket", Arguments: json.RawMessage(`{"incident_id":"INC-001","count":9007199254740993,"small":-128,"ratio":5}`)})
	if !r.OK || p.handlerCalls.Load() != 1 {
		t.Fatalf("valid twin: %+v", r.Error)
	}
}

func TestHostileNamesCatalog(t *testing.T) {
	p := newProbeSet(t)
	unknown := "No tool with that name is available. Available tools: create_ticket, lookup_incident."
	for _, name := range hostile.Names {
		r := p.exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true},
			runtime.ToolCall{ID: "n", Name: name, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
		if r.Code() != runtime.CodeUnknownTool || r.ToolVersion != nil || r.Error.Message != unknown {
			t.Errorf("%.30q: %+v", name, r.Error)
		}
		assertNoLeak(t, r, unknown)
	}
	if n, m := p.handlerCalls.Load(), p.policyCalls.Load(); n != 0 || m != 0 {
		t.Fatalf("hostile names reached the handler %d times and the policy %d times", n, m)
	}
}

// The unknown_tool message lists at most 20 names.
func TestUnknownToolMessageIsBounded(t *testing.T) {
	var set keeltest.Set
	for i := 0; i < 30; i++ {
		set.List = append(set.List, runtime.NewTool(runtime.ToolInfo{Name: string(rune('a'+i%26)) + strings.Repeat("x", i), Version: "1",
			Effect: runtime.EffectRead, Description: "d", InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)}, runtime.Handle(okEcho)))
	}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{Name: "zzz"})
	if got := strings.Count(r.Error.Message, ","); got != 19 || !strings.HasSuffix(r.Error.Message, " and 10 more.") {
		t.Fatalf("message lists %d names: %q", got+1, r.Error.Message)
	}
}

// BenchmarkRejectOversize sends 50 MB of arguments: the byte cap rejects
// them before any parsing, so the cost does not grow with the body. Compare
// with BenchmarkRejectSmall in the same run.
func BenchmarkRejectOversize(b *testing.B) {
	p := newProbeSet(b)
	body := append(append([]byte(`{"incident_id":"`), bytes.Repeat([]byte("a"), 50<<20)...), `"}`...)
	call := runtime.ToolCall{ID: "big", Name: "lookup_incident", Arguments: body}
	b.ReportAllocs()
	for b.Loop() {
		if r := p.exec.Execute(context.Background(), runtime.ExecutionContext{}, call); r.Code() != runtime.CodeInvalidArguments {
			b.Fatal(r.Code())
		}
	}
}

func BenchmarkRejectSmall(b *testing.B) {
	p := newProbeSet(b)
	call := runtime.ToolCall{ID: "small", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id":"INC-1"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if r := p.exec.Execute(context.Background(), runtime.ExecutionContext{}, call); r.Code() != runtime.CodeInvalidArguments {
			b.Fatal(r.Code())
		}
	}
}

// BenchmarkRejectDeep sends 1 MiB of nesting under a raised byte cap: the
// depth cap stops the parse at depth 64, long before the end of the input.
func BenchmarkRejectDeep(b *testing.B) {
	p := newProbeSet(b, runtime.WithLimits(runtime.Limits{MaxArgumentBytes: 8 << 20}))
	body := []byte(`{"x":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`)
	call := runtime.ToolCall{ID: "deep", Name: "lookup_incident", Arguments: body}
	b.ReportAllocs()
	for b.Loop() {
		if r := p.exec.Execute(context.Background(), runtime.ExecutionContext{}, call); r.Code() != runtime.CodeInvalidArguments {
			b.Fatal(r.Code())
		}
	}
}
