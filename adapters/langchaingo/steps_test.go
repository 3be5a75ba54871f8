package langchaingo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/keelgen/keel/adapters/langchaingo"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// langchaingo's agent executor plays the six steps: each observation is
// keel's result with its stable code, but for the unknown name, which the
// executor answers itself; the write waits while Options.Approve asks a
// person, and runs once with the grant; the handler that asks a question
// waits while Options.Answer answers it, and completes once; no handler
// runs that must not.
func TestAgentPlaysTheSteps(t *testing.T) {
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	var asked []runtime.ApprovalRequest
	tools, err := langchaingo.Tools(context.Background(), fx.Exec, langchaingo.Options{Context: fx.Context,
		Approve: func(ctx context.Context, req runtime.ApprovalRequest) (string, error) {
			asked = append(asked, req)
			return fx.Approve(ctx, req)
		},
		Answer: fx.Answer, Accepts: ask.Elicitation})
	if err != nil {
		t.Fatal(err)
	}
	steps := append(frameworktest.Steps(), frameworktest.AskStep())
	var turns []string
	for _, st := range steps {
		turns = append(turns, fmt.Sprintf("Thought: the %s step\nAction: %s\nAction Input: %s", st.Name, st.Tool, st.Arguments))
	}
	turns = append(turns, "Thought: done\nFinal Answer: done")
	executor := agents.NewExecutor(agents.NewOneShotAgent(fake.NewFakeLLM(turns), tools),
		agents.WithReturnIntermediateSteps(), agents.WithMaxIterations(len(turns)))
	out, err := chains.Call(context.Background(), executor, map[string]any{"input": "What broke in INC-1? Open a ticket."})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := out["intermediateSteps"].([]schema.AgentStep)
	if out["output"] != "done" || len(seen) != len(steps) {
		t.Fatalf("output %v after %d steps", out["output"], len(seen))
	}
	for i, st := range steps {
		st = frameworktest.Approved(st) // Approve's grant ran it
		if st.Code == runtime.CodeUnknownTool {
			if !strings.Contains(seen[i].Observation, "is not a valid tool") {
				t.Errorf("unknown: the executor answered %q", seen[i].Observation)
			}
			continue
		}
		if msg := frameworktest.Check(st, seen[i].Observation); msg != "" {
			t.Error(msg)
		}
	}
	if len(asked) != 1 || asked[0].Tool != frameworktest.Ticket {
		t.Fatalf("asked to approve %+v", asked)
	}
	if msg := fx.CheckRuns(1); msg != "" {
		t.Fatal(msg)
	}
	if fx.Runs(frameworktest.Confirm) != 1 {
		t.Fatalf("the handler that asks ran to its end %d times; want once, with the answer", fx.Runs(frameworktest.Confirm))
	}
}
