package example_test

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

func newExecutor(t *testing.T, opts ...runtime.Option) *runtime.Executor {
	t.Helper()
	opts = append([]runtime.Option{runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	e, err := generated.NewExecutor(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func exec(e *runtime.Executor, ec runtime.ExecutionContext, name, args string) runtime.ToolResult {
	return e.Execute(context.Background(), ec, runtime.ToolCall{ID: "t", Name: name, Arguments: json.RawMessage(args)})
}

// The model's view and the executor's view come from one generation and
// name the same tools; the switch selects each listed tool and nothing else.
func TestModelViewEqualsExecutorView(t *testing.T) {
	var modelNames, execNames []string
	for _, m := range generated.ModelTools() {
		modelNames = append(modelNames, m.Name)
		if !json.Valid(m.Parameters) || m.Description == "" {
			t.Errorf("%s: model view lacks a description or a valid parameters schema", m.Name)
		}
	}
	for _, tool := range generated.ToolSet().Tools() {
		info := tool.Info()
		execNames = append(execNames, info.Name)
		if generated.ToolSet().Lookup(info.Name) != tool {
			t.Errorf("switch does not select %s", info.Name)
		}
	}
	want := []string{generated.ToolCreateTicket, generated.ToolLookupIncident}
	if !slices.Equal(modelNames, want) || !slices.Equal(execNames, want) {
		t.Fatalf("model view %v, executor view %v, want both %v", modelNames, execNames, want)
	}
	for _, m := range generated.ModelTools() {
		info := generated.ToolSet().Lookup(m.Name).Info()
		if string(m.Parameters) != string(info.InputSchema) || m.Description != info.Description {
			t.Errorf("%s: the views disagree on schema or description", m.Name)
		}
	}
}

// Failure injection 1: dynamic resolution. Every identifier declared in the
// handler package (functions, types, variables) is unknown as a tool name.
func TestGoIdentifiersAreNotTools(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var idents []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for name, obj := range f.Scope.Objects {
				if obj.Kind != ast.Bad {
					idents = append(idents, name)
				}
			}
		}
	}
	if !slices.Contains(idents, "LookupIncident") || !slices.Contains(idents, "CreateTicket") {
		t.Fatalf("parsed identifiers %v lack the handlers", idents)
	}
	e := newExecutor(t)
	for _, name := range append(idents, "example.LookupIncident", "lookupIncident", "LOOKUP_INCIDENT", "lookup_incident ", "sync_to_prod") {
		r := exec(e, runtime.ExecutionContext{AllowSideEffects: true}, name, `{"incident_id":"INC-001"}`)
		if r.Code() != runtime.CodeUnknownTool || r.ToolVersion != nil {
			t.Errorf("%q: got code %q, want unknown_tool", name, r.Code())
		}
	}
}

// recordingPolicy records every request it sees.
type recordingPolicy struct{ seen []runtime.PolicyRequest }

func (p *recordingPolicy) Decide(ctx context.Context, req runtime.PolicyRequest) runtime.Decision {
	p.seen = append(p.seen, req)
	return runtime.SideEffectPolicy{}.Decide(ctx, req)
}

// Failure injection 2: validation moved after the policy. A write tool with
// invalid arguments is invalid_arguments, and the policy never sees it.
func TestValidationComesBeforePolicy(t *testing.T) {
	p := &recordingPolicy{}
	e := newExecutor(t, runtime.WithPolicy(p))
	for _, args := range []string{`{"incident_id":"INC-1","summary":"x"}`, `{"incident_id":"INC-001"}`, `{"incident_id":"INC-001","summary":"x","priority":"p1"}`} {
		r := exec(e, runtime.ExecutionContext{}, generated.ToolCreateTicket, args)
		if r.Code() != runtime.CodeInvalidArguments {
			t.Errorf("%s: code %q, want invalid_arguments", args, r.Code())
		}
	}
	if len(p.seen) != 0 {
		t.Fatalf("policy saw %d calls with invalid arguments", len(p.seen))
	}
	r := exec(e, runtime.ExecutionContext{}, generated.ToolCreateTicket, `{"incident_id":"INC-001","summary":"x"}`)
	if r.Code() != runtime.CodeApprovalRequired || len(p.seen) != 1 {
		t.Fatalf("valid write: code %q, policy calls %d", r.Code(), len(p.seen))
	}
}

// Failure injection 4: output validation removed. Records that break the
// output schema never reach the model.
func TestBrokenOutputIsInvalidToolOutput(t *testing.T) {
	e := newExecutor(t)
	for name, inc := range map[string]example.Incident{
		"severity not enum": {IncidentID: "INC-901", Service: "s", Severity: "apocalyptic", Symptom: "x", Evidence: []string{}},
		"bad id pattern":    {IncidentID: "INC-902", Service: "s", Severity: "low", Symptom: "x", Evidence: []string{}},
	} {
		id := string(inc.IncidentID)
		if name == "bad id pattern" {
			inc.IncidentID = "nope" // stored under a valid id, returned with an invalid one
		}
		restore := example.PutIncident(example.IncidentID(id), inc)
		r := exec(e, runtime.ExecutionContext{}, generated.ToolLookupIncident, `{"incident_id":"`+id+`"}`)
		restore()
		if r.Code() != runtime.CodeInvalidToolOutput || r.Data != nil {
			b, _ := json.Marshal(r)
			t.Errorf("%s: %s", name, b)
		}
	}
}

func TestStoryCalls(t *testing.T) {
	e := newExecutor(t)
	r := exec(e, runtime.ExecutionContext{}, generated.ToolLookupIncident, `{"incident_id":"INC-001"}`)
	want := `{"incident_id":"INC-001","service":"auth-api","severity":"high","symptom":"登录接口持续返回 502","evidence":["auth-api timeout","database pool exhausted"]}`
	if !r.OK || string(r.Data) != want {
		t.Fatalf("lookup INC-001: %+v data %s", r, r.Data)
	}
	r = exec(e, runtime.ExecutionContext{}, generated.ToolLookupIncident, `{"incident_id":"INC-404"}`)
	if r.Code() != "incident_not_found" || strings.Contains(r.Error.Message, "INC-404") {
		t.Fatalf("lookup INC-404: %+v", r.Error)
	}
	r = exec(e, runtime.ExecutionContext{AllowSideEffects: true}, generated.ToolCreateTicket, `{"incident_id":"INC-001","summary":"raise pool size"}`)
	if !r.OK || !strings.Contains(string(r.Data), `"status":"open"`) {
		t.Fatalf("create_ticket with approval: %+v data %s", r.Error, r.Data)
	}
}
