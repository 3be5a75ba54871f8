package conformance_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// What a policy reads is the value the generated reader accepted, for
// every type shape the conformance set has (unions, Nullable, text types,
// durations, recursive types, maps, tuples): for every valid case of the
// keyword table, the policy's JSON is valid under the tool's input schema,
// and for a tool that returns its arguments it is the result's data, byte
// for byte.
func TestThePolicyReadsWhatTheReaderAccepted(t *testing.T) {
	tools := oracleTools(t)
	var seen []byte
	capture := runtime.PolicyFunc(func(_ context.Context, req runtime.PolicyRequest) runtime.Decision {
		v, err := req.ValueJSON()
		if err != nil {
			t.Errorf("%s: ValueJSON: %v", req.Tool.Name, err)
		}
		seen = bytes.Clone(v)
		return runtime.Decision{Allow: true}
	})
	execs := map[runtime.ToolSet]*runtime.Executor{}
	echoes := map[string]bool{generated.ToolClear: true, generated.ToolUnion: true, generated.ToolQuery: true,
		generated.ToolStrings: true, generated.ToolNumbers: true, generated.ToolTexts: true, generated.ToolCollections: true, generated.ToolProbe: true}
	checked := 0
	for _, c := range keywordCases {
		if c.detail != "" {
			continue
		}
		set := generated.ToolSet()
		if set.Lookup(c.tool) == nil {
			continue // the example's tools have no type a policy could misread
		}
		ex := execs[set]
		if ex == nil {
			var err error
			if ex, err = generated.NewExecutor(runtime.WithPolicy(capture)); err != nil {
				t.Fatal(err)
			}
			execs[set] = ex
		}
		seen = nil
		r := ex.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "p", Name: c.tool, Arguments: []byte(c.args)})
		if seen == nil {
			t.Errorf("%s %s: the policy was not asked (%s)", c.tool, c.args, r.Code())
			continue
		}
		if !tools[c.tool].schemaAccepts(seen) {
			t.Errorf("%s %s: the policy read %s, which the input schema refuses", c.tool, c.args, seen)
		}
		if echoes[c.tool] && r.OK && !bytes.Equal(seen, r.Data) {
			t.Errorf("%s %s: the policy read %s; the handler echoed %s", c.tool, c.args, seen, r.Data)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d cases reached the policy", checked)
	}
}
