package eino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	keeleino "github.com/keelgen/keel/adapters/eino"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// scripted is a tool-calling chat model that asks for the steps' calls in
// its first turn and records, in its second, the tool messages it reads.
type scripted struct {
	steps []frameworktest.Step

	mu   sync.Mutex
	read map[string]string // tool call id → the tool message's content
}

func (s *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if in[len(in)-1].Role != schema.Tool {
		var calls []schema.ToolCall
		for i, st := range s.steps {
			calls = append(calls, schema.ToolCall{ID: fmt.Sprint("call_", i), Type: "function",
				Function: schema.FunctionCall{Name: st.Tool, Arguments: st.Arguments}})
		}
		return &schema.Message{Role: schema.Assistant, ToolCalls: calls}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range in {
		if m.Role == schema.Tool {
			s.read[m.ToolCallID] = m.Content
		}
	}
	return &schema.Message{Role: schema.Assistant, Content: "done"}, nil
}

func (s *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := s.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{m}), nil
}

func (s *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return s, nil }

type checkpoints struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *checkpoints) Get(_ context.Context, id string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[id]
	return b, ok, nil
}

func (c *checkpoints) Set(_ context.Context, id string, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = b
	return nil
}

// An eino ReAct agent, in a graph compiled with a checkpoint store, runs
// the model's six calls through keel: each tool message is keel's result
// with its stable code, an unknown name included; the write the policy
// sends for approval interrupts the graph, and resuming it with a person's
// grant runs the write once; no handler runs that must not.
func TestReActAgentRunsKeelTools(t *testing.T) {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	steps := frameworktest.Steps()
	run, chat := agentGraph(t, fx, steps, keeleino.Options{Context: fx.Context})
	input := []*schema.Message{schema.UserMessage("What broke in INC-1? Open a ticket.")}

	_, err = run.Invoke(ctx, input, compose.WithCheckPointID("conversation-1"))
	approvals := keeleino.Approvals(err)
	if len(approvals) != 1 || approvals[0].Request.Tool != frameworktest.Ticket || approvals[0].Request.CallID != "call_4" {
		t.Fatalf("the run's error %v waits on %+v, want the ticket's approval", err, approvals)
	}
	if fx.Runs(frameworktest.Ticket) != 0 {
		t.Fatal("the write ran before its approval")
	}
	grant, err := fx.Approve(ctx, approvals[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Invoke(keeleino.Resume(ctx, map[string]string{approvals[0].InterruptID: grant}), input, compose.WithCheckPointID("conversation-1"))
	if err != nil || out.Content != "done" {
		t.Fatalf("resumed: %+v, %v", out, err)
	}
	for i, st := range steps {
		if msg := frameworktest.Check(frameworktest.Approved(st), chat.read[fmt.Sprint("call_", i)]); msg != "" {
			t.Error(msg)
		}
	}
	if msg := fx.CheckRuns(1); msg != "" {
		t.Fatal(msg)
	}
}

// agentGraph is a ReAct agent over fx's tools whose model asks for steps,
// in a graph compiled with a checkpoint store.
func agentGraph(t *testing.T, fx *frameworktest.Fixture, steps []frameworktest.Step, o keeleino.Options) (compose.Runnable[[]*schema.Message, *schema.Message], *scripted) {
	ctx := context.Background()
	cfg, err := keeleino.NodeConfig(ctx, fx.Exec, o)
	if err != nil {
		t.Fatal(err)
	}
	chat := &scripted{steps: steps, read: map[string]string{}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: chat, ToolsConfig: *cfg, MaxStep: 6})
	if err != nil {
		t.Fatal(err)
	}
	inner, opts := agent.ExportGraph()
	g := compose.NewGraph[[]*schema.Message, *schema.Message]()
	if err := g.AddGraphNode("agent", inner, opts...); err != nil {
		t.Fatal(err)
	}
	if err := g.AddEdge(compose.START, "agent"); err != nil {
		t.Fatal(err)
	}
	if err := g.AddEdge("agent", compose.END); err != nil {
		t.Fatal(err)
	}
	run, err := g.Compile(ctx, compose.WithCheckPointStore(&checkpoints{m: map[string][]byte{}}))
	if err != nil {
		t.Fatal(err)
	}
	return run, chat
}

// A handler that asks its caller a question interrupts the graph with the
// request; the harness answers it (the person confirms), resumes with
// ResumeAnswers, and the call runs to its end once, the model reading its
// result.
func TestReActAgentAnswersAHandlersQuestion(t *testing.T) {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	step := frameworktest.AskStep()
	run, chat := agentGraph(t, fx, []frameworktest.Step{step}, keeleino.Options{Context: fx.Context, Accepts: ask.Elicitation})
	input := []*schema.Message{schema.UserMessage("Is INC-1 right?")}
	_, err = run.Invoke(ctx, input, compose.WithCheckPointID("conversation-2"))
	inputs := keeleino.Inputs(err)
	if len(inputs) != 1 || inputs[0].CallID != "call_0" || len(inputs[0].Requests) != 1 {
		t.Fatalf("the run's error %v waits on %+v, want the confirmation's request", err, inputs)
	}
	answers := map[string]json.RawMessage{}
	for key, r := range inputs[0].Requests {
		if answers[key], err = fx.Answer(ctx, key, r); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run.Invoke(keeleino.ResumeAnswers(ctx, map[string]map[string]json.RawMessage{inputs[0].InterruptID: answers}), input, compose.WithCheckPointID("conversation-2"))
	if err != nil || out.Content != "done" {
		t.Fatalf("resumed: %+v, %v", out, err)
	}
	if msg := frameworktest.Check(step, chat.read["call_0"]); msg != "" || !strings.Contains(chat.read["call_0"], "confirmed") {
		t.Fatalf("%s: the model read %s", msg, chat.read["call_0"])
	}
	if fx.Runs(frameworktest.Confirm) != 1 {
		t.Fatalf("the handler ran to its end %d times; want once", fx.Runs(frameworktest.Confirm))
	}
}
