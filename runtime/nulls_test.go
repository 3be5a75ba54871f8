package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

type noteArgs struct {
	Text   string   `json:"text"`
	Author *string  `json:"author,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Meta   *struct {
		Source string `json:"source,omitempty"`
	} `json:"meta,omitempty"`
}

// A null the model sends for an optional member is read as absent on the
// hand-bound path too, at any depth; a null for a required member is still
// invalid_arguments.
func TestNullForAnOptionalMemberIsAbsent(t *testing.T) {
	var got noteArgs
	set := keeltest.Of(runtime.NewTool(runtime.ToolInfo{Name: "note", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["text"],"properties":{
			"text":{"type":"string"},"author":{"type":"string","minLength":1},"tags":{"type":"array","items":{"type":"string"}},
			"meta":{"type":"object","additionalProperties":false,"properties":{"source":{"type":"string","enum":["cli","web"]}}}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a noteArgs) (struct{}, error) { got = a; return struct{}{}, nil })))
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args string) runtime.ToolResult {
		got = noteArgs{}
		return e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "n", Name: "note", Arguments: json.RawMessage(args)})
	}
	if r := run(`{"text":"hi","author":null,"tags":null,"meta":{"source":null}}`); !r.OK || got.Author != nil || got.Tags != nil || got.Meta == nil || got.Meta.Source != "" {
		t.Fatalf("nulls for optional members: %+v, handler got %+v", r.Error, got)
	}
	for args, ptr := range map[string]string{`{"text":null}`: "/text", `{"text":"hi","meta":{"source":"tv"}}`: "/meta/source"} {
		if r := run(args); r.Code() != runtime.CodeInvalidArguments || r.Error.Details[0].Pointer != ptr {
			t.Errorf("%s: %+v", args, r.Error)
		}
	}
}

// A hand-bound schema with $defs: a null for an optional member is absent
// at every depth of a recursive type, as it is for generated readers; and a
// schema whose alternatives refer to themselves without descending is
// walked once per value (the call ends, and passes).
func TestOptionalNullsThroughRefs(t *testing.T) {
	type cond struct {
		Not *cond  `json:"not,omitempty"`
		F   string `json:"f,omitempty"`
	}
	type args struct {
		Where cond `json:"where"`
	}
	var got args
	tool := runtime.NewTool(runtime.ToolInfo{Name: "q", Version: "1", Effect: runtime.EffectRead, Description: "Queries.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"where":{"$ref":"#/$defs/c"}},"required":["where"],"additionalProperties":false,"$defs":{
			"c":{"type":"object","properties":{"not":{"$ref":"#/$defs/c"},"f":{"type":"string"}},"additionalProperties":false}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a args) (struct{}, error) { got = a; return struct{}{}, nil }))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "n", Name: "q",
		Arguments: json.RawMessage(`{"where":{"not":{"not":null,"f":null}}}`)})
	if !r.OK || got.Where.Not == nil || got.Where.Not.Not != nil {
		t.Fatalf("result %+v, handler got %+v", r, got)
	}
	loop := runtime.NewTool(runtime.ToolInfo{Name: "loop", Version: "1", Effect: runtime.EffectRead, Description: "Loops.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/loop"}},"$defs":{"loop":{"anyOf":[` +
			`{"$ref":"#/$defs/loop"},{"$ref":"#/$defs/loop"},{"type":"object","properties":{"y":{"type":"string"}}}]}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, map[string]any) (struct{}, error) { return struct{}{}, nil }))
	exec, err = runtime.NewExecutor(keeltest.Of(loop), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "l", Name: "loop", Arguments: json.RawMessage(`{"x":{"y":null}}`)}); !r.OK {
		t.Fatalf("self-referring alternatives: %+v", r.Error)
	}
}
