package langchaingo_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/keelgen/keel/adapters/langchaingo"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// langchaingo's own one-shot agent and executor, with a model that answers
// as a ReAct model does: it looks an incident up through keel, sends
// arguments keel refuses (and reads the stable code back as its
// observation, the run going on), then answers.
func TestAgentRunsKeelTools(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := langchaingo.Tools(context.Background(), exec, langchaingo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tools[1].Description(); !strings.Contains(d, "Input: one JSON object matching this JSON Schema: {") || !strings.Contains(d, `"incident_id"`) {
		t.Fatalf("description %q", d)
	}
	model := fake.NewFakeLLM([]string{
		"Thought: look it up\nAction: lookup_incident\nAction Input: {\"incident_id\":\"INC-001\"}",
		"Thought: and the other one\nAction: lookup_incident\nAction Input: {\"incident_id\":42}",
		"Thought: done\nFinal Answer: INC-001 is the auth-api timeout.",
	})
	executor := agents.NewExecutor(agents.NewOneShotAgent(model, tools), agents.WithReturnIntermediateSteps())
	out, err := chains.Call(context.Background(), executor, map[string]any{"input": "What broke in INC-001?"})
	if err != nil {
		t.Fatal(err)
	}
	if out["output"] != "INC-001 is the auth-api timeout." {
		t.Fatalf("output %v", out["output"])
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(steps) != 2 || !strings.Contains(steps[0].Observation, `"ok":true`) || !strings.Contains(steps[0].Observation, `"service":"auth-api"`) ||
		!strings.Contains(steps[1].Observation, `"code":"invalid_arguments"`) {
		t.Fatalf("observations %v", steps)
	}
}

// For native function calling: the definitions carry keel's schemas, and a
// call's arguments reach the executor exactly as the model wrote them (a
// member named twice is refused, not last-wins).
func TestFunctionCalling(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defs := langchaingo.Definitions(context.Background(), exec, runtime.ExecutionContext{})
	if len(defs) != 2 || defs[1].Function.Name != generated.ToolLookupIncident || !strings.Contains(string(defs[1].Function.Parameters.(json.RawMessage)), `"pattern"`) {
		t.Fatalf("definitions %+v", defs)
	}
	for args, code := range map[string]string{
		`{"incident_id":"INC-001"}`:                         "",
		`{"incident_id":"INC-404","incident_id":"INC-001"}`: "invalid_arguments",
	} {
		call := langchaingo.Call(llms.ToolCall{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: generated.ToolLookupIncident, Arguments: args}})
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
		reply := langchaingo.Result(r)
		if string(r.Code()) != code || reply.ToolCallID != "call_1" || (code != "" && !strings.Contains(reply.Content, `"code":"`+code+`"`)) {
			t.Errorf("%s: code %q, reply %+v", args, r.Code(), reply)
		}
	}
}
