package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/keelgen/keel/adapters/langchaingo"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// The corpus through langchaingo's agent executor: it lists only what the
// caller may call (tools and definitions), each call to a listed tool is
// keel's answer, audited; a name it does not list (hidden, scoped out,
// unknown) the agent executor answers itself, before keel, and runs
// nothing.
func TestDoorAgentExecutor(t *testing.T) {
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := langchaingo.Tools(ctx, f.Exec, langchaingo.Options{Context: func(context.Context) runtime.ExecutionContext { return doortest.Caller() }})
	if err != nil {
		t.Fatal(err)
	}
	var listed, defined []string
	for _, tool := range tools {
		listed = append(listed, tool.Name())
	}
	for _, d := range langchaingo.Definitions(ctx, f.Exec, doortest.Caller()) {
		defined = append(defined, d.Function.Name)
	}
	for _, names := range [][]string{listed, defined} {
		if err := doortest.CheckListed(names); err != nil {
			t.Error(err)
		}
	}
	var cases []doortest.Case
	var turns []string
	for _, c := range doortest.Calls() {
		// The agent reads "Action Input:" to the end of the reply, trimmed.
		if strings.ContainsAny(c.Tool, "\n\r") || strings.TrimSpace(c.Arguments) != c.Arguments || c.Tool != strings.TrimSpace(c.Tool) || c.Tool == "" || c.Arguments == "" {
			continue
		}
		cases = append(cases, c)
		turns = append(turns, fmt.Sprintf("Thought: %s\nAction: %s\nAction Input: %s", c.Name, c.Tool, c.Arguments))
	}
	turns = append(turns, "Thought: done\nFinal Answer: done")
	executor := agents.NewExecutor(agents.NewOneShotAgent(fake.NewFakeLLM(turns), tools),
		agents.WithReturnIntermediateSteps(), agents.WithMaxIterations(len(turns)))
	out, err := chains.Call(ctx, executor, map[string]any{"input": "go"})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(seen) != len(cases) {
		t.Fatalf("%d steps for %d calls", len(seen), len(cases))
	}
	reached := 0
	for i, c := range cases {
		obs := seen[i].Observation
		if !strings.EqualFold(c.Tool, doortest.Probe) {
			if obs != c.Tool+" is not a valid tool, try another one" { // the model's own name, echoed
				t.Errorf("%s: the agent answered %q", c.Name, obs)
			}
			continue
		}
		reached++
		// The agent matched the name without regard to case; keel ran the
		// tool it matched.
		if c.Code == runtime.CodeUnknownTool {
			c.Code = ""
		}
		if err := doortest.CheckResultJSON(c, obs); err != nil {
			t.Error(err)
		}
	}
	if f.Records() != reached {
		t.Errorf("%d audit records for %d calls that reached keel", f.Records(), reached)
	}
	t.Logf("langchaingo: %d calls, %d reached keel", len(cases), reached)
}

// Two tools whose names differ only in case would shadow each other under
// the agent executor's matching: Tools refuses the set, naming both.
func TestCaseCollisionRefused(t *testing.T) {
	var list []*runtime.Tool
	for _, name := range []string{"ab", "aB"} {
		list = append(list, runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: "x",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })))
	}
	set, err := keeltest.Locked(list...)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = langchaingo.Tools(context.Background(), exec, langchaingo.Options{})
	if err == nil || !strings.Contains(err.Error(), `"aB" and "ab"`) {
		t.Fatalf("Tools: %v", err)
	}
}
