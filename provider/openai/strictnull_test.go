package openai_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A plan has steps (array items with an optional member), an owner (a
// nested object with an optional member) and a target that is one of two
// shapes (anyOf), itself optional.
type planArgs struct {
	Steps  []planStep `json:"steps"`
	Owner  owner      `json:"owner"`
	Target *target    `json:"target,omitempty"`
}

type planStep struct {
	Name string `json:"name"`
	Note string `json:"note,omitempty"`
}

type owner struct {
	Team  string `json:"team"`
	Pager string `json:"pager,omitempty"`
}

type target struct {
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	Zone string `json:"zone,omitempty"`
}

const planSchema = `{"type":"object","additionalProperties":false,"required":["steps","owner"],"properties":{
 "steps":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name"],
   "properties":{"name":{"type":"string"},"note":{"type":"string"}}}},
 "owner":{"type":"object","additionalProperties":false,"required":["team"],
   "properties":{"team":{"type":"string"},"pager":{"type":"string"}}},
 "target":{"anyOf":[
   {"type":"object","additionalProperties":false,"required":["host"],"properties":{"host":{"type":"string"},"port":{"type":"integer"}}},
   {"type":"object","additionalProperties":false,"required":["zone"],"properties":{"zone":{"type":"string"}}}]}}}`

// The strict schema makes every optional member, at every depth, required
// and nullable, and a model's nulls for them reach the executor as absent
// members: the executor accepts the call and the handler sees zero values.
func TestStrictNullsAtEveryDepth(t *testing.T) {
	params, problems := strictForm(json.RawMessage(planSchema))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var doc map[string]any
	if err := json.Unmarshal(params, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	step := props["steps"].(map[string]any)["items"].(map[string]any)
	if got := step["properties"].(map[string]any)["note"].(map[string]any)["type"]; !equalJSON(got, []any{"string", "null"}) {
		t.Errorf("an optional member of array items: type %v", got)
	}
	if got := props["owner"].(map[string]any)["properties"].(map[string]any)["pager"].(map[string]any)["type"]; !equalJSON(got, []any{"string", "null"}) {
		t.Errorf("an optional member of a nested object: type %v", got)
	}
	alts := props["target"].(map[string]any)["anyOf"].([]any)
	if len(alts) != 3 || !equalJSON(alts[2], map[string]any{"type": "null"}) {
		t.Errorf("an optional anyOf member is not nullable: %v", alts)
	}
	if got := alts[0].(map[string]any)["properties"].(map[string]any)["port"].(map[string]any)["type"]; !equalJSON(got, []any{"integer", "null"}) {
		t.Errorf("an optional member of an anyOf alternative: type %v", got)
	}

	var seen planArgs
	tool := runtime.NewTool(runtime.ToolInfo{Name: "plan", Version: "1.0", Effect: runtime.EffectRead,
		InputSchema: json.RawMessage(planSchema), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a planArgs) (struct{}, error) { seen = a; return struct{}{}, nil }))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	a := openai.New([]runtime.ModelTool{{Name: "plan", Description: "Plan.", Parameters: json.RawMessage(planSchema)}}, openai.Options{Strict: true})
	if !a.ChatTools()[0].Function.Strict {
		t.Fatal("the plan tool is not offered strict")
	}
	// What a strict model sends: every member present, null where optional.
	for _, args := range []string{
		`{"steps":[{"name":"a","note":null},{"name":"b","note":"x"}],"owner":{"team":"sre","pager":null},"target":null}`,
		`{"steps":[],"owner":{"team":"sre","pager":null},"target":{"host":"db","port":null}}`,
		`{"steps":[{"name":"a","note":null}],"owner":{"team":"sre","pager":"p"},"target":{"zone":"eu"}}`,
	} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, a.Call("c", "plan", args))
		if !r.OK {
			t.Errorf("%s: %s", args, r.Code())
		}
	}
	if seen.Target == nil || seen.Target.Zone != "eu" || seen.Steps[0].Note != "" || seen.Owner.Pager != "p" {
		t.Errorf("handler saw %+v", seen)
	}
	// A null for a required member at depth stays, and the executor refuses it.
	call := a.Call("c", "plan", `{"steps":[{"name":null}],"owner":{"team":"sre"}}`)
	if !strings.Contains(string(call.Arguments), `"name":null`) {
		t.Fatalf("a required null was dropped: %s", call.Arguments)
	}
	if r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call); r.Code() != runtime.CodeInvalidArguments {
		t.Fatalf("required null: %s", r.Code())
	}
}

// The caps come before any walk: arguments over the size cap, nested past
// the depth cap, or that do not parse strictly pass through untouched, and
// fast; the executor rejects them.
func TestStrictNullPassAppliesTheCapsFirst(t *testing.T) {
	a := openai.New([]runtime.ModelTool{{Name: "plan", Description: "Plan.", Parameters: json.RawMessage(planSchema)}}, openai.Options{Strict: true})
	deep := `{"steps":[{"name":"a","note":null}],"owner":{"team":"t","pager":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}}`
	big := `{"steps":[{"name":"` + strings.Repeat("a", 1<<20) + `","note":null}],"owner":{"team":"t"}}`
	for name, args := range map[string]string{
		"9000 deep":            deep,
		"over 1 MiB":           big,
		"duplicate member":     `{"steps":[],"owner":{"team":"t","pager":null,"pager":null}}`,
		"escaped duplicate":    `{"steps":[],"owner":{"team":"t","pager":null,"p\u0061ger":null}}`,
		"lone surrogate":       `{"steps":[{"name":"\ud800","note":null}],"owner":{"team":"t"}}`,
		"trailing data":        `{"steps":[],"owner":{"team":"t","pager":null}} {}`,
		"nothing to drop":      `{"steps":[],"owner":{"team":"t"}}`,
		"not an object at all": `[1,2,null]`,
	} {
		start := time.Now()
		got := a.Call("c", "plan", args).Arguments
		if string(got) != args {
			t.Errorf("%s: arguments rewritten", name)
		}
		if d := time.Since(start); d > 2*time.Second { // a generous bound; the old walk took 19 s on 9,000 levels
			t.Errorf("%s: took %v", name, d)
		}
	}
	small := openai.New([]runtime.ModelTool{{Name: "plan", Description: "Plan.", Parameters: json.RawMessage(planSchema)}},
		openai.Options{Strict: true, Limits: runtime.Limits{MaxArgumentBytes: 16}})
	args := `{"steps":[],"owner":{"team":"t","pager":null}}`
	if got := small.Call("c", "plan", args).Arguments; string(got) != args {
		t.Errorf("arguments over a custom cap were rewritten: %s", got)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
