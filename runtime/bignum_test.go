package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

type stepArgs struct {
	Step float64 `json:"step"`
}

// A number with a huge exponent is refused before the schema validator sees
// it: the validator computes numbers with math/big, where 1e99999999 takes
// minutes and 1e-99999999 under multipleOf panics.
func TestHugeExponentsAreRefusedBeforeValidation(t *testing.T) {
	set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "step", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"step":{"type":"number","multipleOf":0.25}},"required":["step"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, stepArgs) (struct{}, error) { return struct{}{}, nil }))}}
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"step":1e-99999999}`, `{"step":1e99999999}`, `{"step":-25E-1000001}`} {
		r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "step", Arguments: json.RawMessage(args)})
		if r.Code() != runtime.CodeInvalidArguments || len(r.Error.Details) != 1 || r.Error.Details[0].Keyword != "range" {
			t.Errorf("%s: %+v", args, r.Error)
		}
	}
	r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "step", Arguments: json.RawMessage(`{"step":2.5e-1}`)})
	if !r.OK {
		t.Fatalf("2.5e-1: %+v", r.Error)
	}
}

// A number literal of a million digits is refused before the validator,
// which ignores math/big's failure to parse it and then panics (nil *Rat)
// under minimum, maximum, exclusive bounds or multipleOf, or spends time
// quadratic in its length. Every path bounds a literal's length.
func TestLongNumberLiteralsAreRefusedBeforeValidation(t *testing.T) {
	for _, kw := range []string{`"type":"number","minimum":0`, `"type":"number","maximum":1`, `"type":"integer","exclusiveMinimum":0`,
		`"type":"integer","exclusiveMaximum":1`, `"type":"number","multipleOf":0.25`} {
		set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "step", Version: "1", Effect: runtime.EffectRead, Description: "d",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"step":{` + kw + `}},"required":["step"],"additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, stepArgs) (struct{}, error) { return struct{}{}, nil }))}}
		e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
		if err != nil {
			t.Fatal(err)
		}
		for _, lit := range []string{"0." + strings.Repeat("0", 1_000_001) + "1", "1" + strings.Repeat("0", 1001), "-0." + strings.Repeat("9", 1000)} {
			r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "step", Arguments: json.RawMessage(`{"step":` + lit + `}`)})
			if r.Code() != runtime.CodeInvalidArguments || len(r.Error.Details) != 1 || r.Error.Details[0].Keyword != "range" {
				t.Errorf("%s, a %d-byte literal: %+v", kw, len(lit), r.Error)
			}
		}
		// At the bound, the validator still decides.
		if r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "step", Arguments: json.RawMessage(`{"step":0.` + strings.Repeat("0", 997) + `1}`)}); r.Code() == runtime.CodeToolInternalError {
			t.Errorf("%s, a 1000-byte literal: %+v", kw, r.Error)
		}
	}
}

// An exclusive bound on a non-integer member of a hand-bound tool is
// refused when the executor is made: the validator would pass
// 0.99999999999999999999 under exclusiveMaximum: 1 and 1e-400 under
// exclusiveMinimum: 0, and the handler would get 1 and 0. An integer
// member's exclusive bound is sound (json v2 refuses what is not exact).
func TestHandBoundExclusiveFloatBoundsAreRefused(t *testing.T) {
	tool := func(member string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: "x", Version: "1", Effect: runtime.EffectRead, Description: "d",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"x":` + member + `},"required":["x"],"additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, stepArgs) (struct{}, error) { return struct{}{}, nil }))
	}
	for _, member := range []string{`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, `{"exclusiveMaximum":1}`,
		`{"type":["number","null"],"exclusiveMinimum":0}`, `{"type":"array","items":{"type":"number","exclusiveMaximum":1}}`} {
		if _, err := runtime.NewExecutor(keeltest.Of(tool(member))); err == nil || !strings.Contains(err.Error(), "generate the tool with keelgen") {
			t.Errorf("%s: %v", member, err)
		}
	}
	for _, member := range []string{`{"type":"integer","exclusiveMinimum":0}`, `{"type":"number","minimum":0,"maximum":1}`} {
		if _, err := runtime.NewExecutor(keeltest.Of(tool(member))); err != nil {
			t.Errorf("%s: %v", member, err)
		}
	}
}

// BenchmarkMillionDigitNumber sends the million-digit number to a
// hand-bound tool with a minimum, beside a peer of the same size whose
// member is a string: refusing the number costs what reading the bytes
// costs, not the validator's quadratic time (about 2 s before the bound).
func BenchmarkMillionDigitNumber(b *testing.B) {
	set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "step", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"step":{"type":["number","string"],"minimum":0}},"required":["step"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			Step json.RawMessage `json:"step"`
		}) (struct{}, error) {
			return struct{}{}, nil
		}))}}
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	digits := strings.Repeat("0", 1_000_001)
	for _, c := range []struct{ name, args string }{
		{"number", `{"step":0.` + digits + `1}`},
		{"string-peer", `{"step":"0.` + digits + `1"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			call := runtime.ToolCall{ID: "h", Name: "step", Arguments: json.RawMessage(c.args)}
			b.SetBytes(int64(len(c.args)))
			for b.Loop() {
				e.Execute(context.Background(), runtime.ExecutionContext{}, call)
			}
		})
	}
}

// A hand-bound tool reads netip's types as generated readers do: "" is no
// address at all and a zone of any text can carry NUL or a line break, so
// both are refused, before the handler.
func TestHandBoundAddressesAreChecked(t *testing.T) {
	ran := 0
	set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "ping", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"},"net":{"type":"string"},"to":{"type":"string"}},` +
			`"required":["host"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			Host netip.Addr     `json:"host"`
			Net  *netip.Prefix  `json:"net,omitempty"`
			To   netip.AddrPort `json:"to,omitzero"`
		}) (struct{}, error) {
			ran++
			return struct{}{}, nil
		}))}}
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for args, ok := range map[string]bool{
		`{"host":"192.0.2.1"}`:                       true,
		`{"host":"fe80::1%eth0","net":"10.0.0.0/8"}`: true,
		`{"host":"::1","to":"[fe80::1%en0]:443"}`:    true,
		`{"host":""}`:                                        false,
		`{"host":"::1","net":""}`:                            false,
		`{"host":"::1","to":""}`:                             false,
		`{"host":"fe80::1%\u0000\nrm -rf /"}`:                false,
		`{"host":"::1","to":"[fe80::1%a b]:443"}`:            false,
		`{"host":"fe80::1%` + strings.Repeat("x", 65) + `"}`: false,
	} {
		before := ran
		r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "ping", Arguments: json.RawMessage(args)})
		if r.OK != ok || (!ok && (r.Code() != runtime.CodeInvalidArguments || ran != before)) {
			t.Errorf("%s: ok=%v %+v (handler runs %d)", args, r.OK, r.Error, ran-before)
		}
	}
}

// A hand-bound []byte reads strict base64 (json v2's RFC 4648 reading), as
// the generated reader now does: no line break is skipped.
func TestHandBoundBase64IsStrict(t *testing.T) {
	var got []byte
	set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "put", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"blob":{"type":"string","contentEncoding":"base64"}},"required":["blob"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a struct {
			Blob []byte `json:"blob"`
		}) (struct{}, error) {
			got = a.Blob
			return struct{}{}, nil
		}))}}
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for args, ok := range map[string]bool{`{"blob":"QUJDREVG"}`: true, `{"blob":"QUJD\nREVG"}`: false, `{"blob":"QUJD\r\nREVG"}`: false, `{"blob":"QUJDREVG\n"}`: false} {
		got = nil
		r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "h", Name: "put", Arguments: json.RawMessage(args)})
		if r.OK != ok || (ok && string(got) != "ABCDEF") || (!ok && (r.Code() != runtime.CodeInvalidArguments || got != nil)) {
			t.Errorf("%s: ok=%v %+v, handler got %q", args, r.OK, r.Error, got)
		}
	}
}

// MCP makes a call's arguments optional, and models send null for none:
// absent, empty, blank or null arguments are {}, so a tool whose schema
// accepts {} runs (before, it was invalid_arguments, "unexpected EOF" in
// the log); anything else that is not an object is still refused.
func TestAbsentArgumentsAreAnEmptyObject(t *testing.T) {
	ran := 0
	set := keeltest.Set{List: []*runtime.Tool{runtime.NewTool(runtime.ToolInfo{Name: "ping", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran++; return struct{}{}, nil }))}}
	e, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []json.RawMessage{nil, json.RawMessage(""), json.RawMessage(" \n"), json.RawMessage("null"), json.RawMessage(" null ")} {
		before := ran
		if r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "a", Name: "ping", Arguments: args}); !r.OK || ran != before+1 {
			t.Errorf("arguments %q: %+v", args, r.Error)
		}
	}
	for _, args := range []string{"nul", "[]", `"x"`, "0", "null null"} {
		if r := e.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "a", Name: "ping", Arguments: json.RawMessage(args)}); r.Code() != runtime.CodeInvalidArguments {
			t.Errorf("arguments %q: %s", args, r.Code())
		}
	}
}
