package keelgenkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"

	keelgenkit "github.com/keelgen/keel/adapters/genkit"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// scripted is a Genkit model that asks for the given tool calls in its
// first turn and records, in its second, the tool responses it reads.
type scripted struct {
	steps []frameworktest.Step

	mu   sync.Mutex
	read map[string]string // tool request ref → the output the model read, as JSON
}

func (s *scripted) generate(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != ai.RoleTool {
		var parts []*ai.Part
		for i, st := range s.steps {
			var input any
			if err := json.Unmarshal([]byte(st.Arguments), &input); err != nil {
				return nil, err
			}
			parts = append(parts, ai.NewToolRequestPart(&ai.ToolRequest{Name: st.Tool, Ref: fmt.Sprint("call_", i), Input: input}))
		}
		return &ai.ModelResponse{Request: req, Message: ai.NewModelMessage(parts...), FinishReason: ai.FinishReasonStop}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range last.Content {
		if p.ToolResponse != nil {
			b, err := json.Marshal(p.ToolResponse.Output)
			if err != nil {
				return nil, err
			}
			s.read[p.ToolResponse.Ref] = string(b)
		}
	}
	return &ai.ModelResponse{Request: req, Message: ai.NewModelTextMessage("done"), FinishReason: ai.FinishReasonStop}, nil
}

// A Genkit flow runs a model's calls through keel: the valid call, invalid
// arguments, a business error and a panic come back as keel's results with
// their stable codes, and the write the policy sends for approval is a
// Genkit interrupt, which the flow resumes with a person's grant; the
// grant runs the write once.
func TestFlowRunsKeelTools(t *testing.T) {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	var steps []frameworktest.Step
	for _, st := range frameworktest.Steps() {
		if st.Code != runtime.CodeUnknownTool { // Genkit answers an unknown name itself; see the next test
			steps = append(steps, st)
		}
	}
	model := &scripted{steps: steps, read: map[string]string{}}
	g := genkit.Init(ctx)
	m := genkit.DefineModel(g, "scripted/model", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, model.generate)
	tools, err := keelgenkit.Tools(context.Background(), fx.Exec, keelgenkit.Options{Context: fx.Context})
	if err != nil {
		t.Fatal(err)
	}
	var approved []runtime.ApprovalRequest
	var restarts []*ai.Part
	var history []*ai.Message
	flow := genkit.DefineFlow(g, "triage", func(ctx context.Context, question string) (string, error) {
		resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithPrompt(question))
		if err != nil {
			return "", err
		}
		for resp.FinishReason == ai.FinishReasonInterrupted {
			restarts = nil
			for _, p := range resp.Interrupts() {
				req, ok := keelgenkit.ApprovalRequest(p)
				if !ok {
					return "", fmt.Errorf("an interrupt that is not keel's: %+v", p.Metadata)
				}
				approved = append(approved, req)
				grant, err := fx.Approve(ctx, req)
				if err != nil {
					return "", err
				}
				restarts = append(restarts, keelgenkit.Restart(p, grant))
			}
			history = resp.History()
			resp, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithMessages(history...), ai.WithToolRestarts(restarts...))
			if err != nil {
				return "", err
			}
		}
		return resp.Text(), nil
	})
	out, err := flow.Run(ctx, "What broke in INC-1, and open a ticket.")
	if err != nil || out != "done" {
		t.Fatalf("flow: %q, %v", out, err)
	}
	if len(approved) != 1 || approved[0].Tool != frameworktest.Ticket {
		t.Fatalf("approval requests: %+v", approved)
	}
	for i, st := range steps {
		if msg := frameworktest.Check(frameworktest.Approved(st), model.read[fmt.Sprint("call_", i)]); msg != "" {
			t.Error(msg)
		}
	}
	// The valid call and the business error each ran lookup once, before
	// and never after the interrupt; the write ran once, with the grant.
	if msg := fx.CheckRuns(1); msg != "" {
		t.Fatal(msg)
	}

	// The same grant, presented again, is refused: it is used once.
	delete(model.read, "call_3")
	if _, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithMessages(history...), ai.WithToolRestarts(restarts...)); err != nil {
		t.Fatal(err)
	}
	if fx.Runs(frameworktest.Ticket) != 1 || !strings.Contains(model.read["call_3"], `"ok":false`) {
		t.Fatalf("a replayed grant: ticket ran %d times, the model read %s", fx.Runs(frameworktest.Ticket), model.read["call_3"])
	}
}

// Genkit's definitions carry keel's schema, and a name the set lacks ends
// Generate with Genkit's own NOT_FOUND error before keel sees it: no handler
// runs.
func TestUnknownNameEndsGenerate(t *testing.T) {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := keelgenkit.Tools(context.Background(), fx.Exec, keelgenkit.Options{Context: fx.Context})
	if err != nil {
		t.Fatal(err)
	}
	var def *ai.ToolDefinition
	for _, tl := range tools {
		if d := tl.(ai.Tool).Definition(); d.Name == frameworktest.Lookup {
			def = d
		}
	}
	if def == nil || def.InputSchema["required"].([]any)[0] != "id" || def.InputSchema["additionalProperties"] != false {
		t.Fatalf("lookup's definition: %+v", def)
	}
	var unknown frameworktest.Step
	for _, st := range frameworktest.Steps() {
		if st.Code == runtime.CodeUnknownTool {
			unknown = st
		}
	}
	model := &scripted{steps: []frameworktest.Step{unknown}, read: map[string]string{}}
	g := genkit.Init(ctx)
	m := genkit.DefineModel(g, "scripted/model", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, model.generate)
	_, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithPrompt("Clean up."))
	var gerr *core.GenkitError
	if !errors.As(err, &gerr) || gerr.Status != core.NOT_FOUND || !strings.Contains(gerr.Message, unknown.Tool) {
		t.Fatalf("Generate: %v", err)
	}
	for _, name := range []string{frameworktest.Lookup, frameworktest.Ticket, frameworktest.Crash} {
		if fx.Runs(name) != 0 {
			t.Fatalf("%s ran", name)
		}
	}
}

// ApprovalRequest and Restart take only keel's interrupts: another part,
// or another tool's interrupt, gives nothing to approve and no restart;
// Tools refuses a nil executor.
func TestOnlyKeelInterrupts(t *testing.T) {
	if _, err := keelgenkit.Tools(context.Background(), nil, keelgenkit.Options{}); err == nil {
		t.Fatal("Tools accepted a nil executor")
	}
	other := ai.NewToolRequestPart(&ai.ToolRequest{Name: "theirs", Ref: "1", Input: map[string]any{}})
	other.Metadata = map[string]any{"interrupt": map[string]any{"reason": "confirm"}}
	for _, p := range []*ai.Part{nil, ai.NewTextPart("hi"), other} {
		if req, ok := keelgenkit.ApprovalRequest(p); ok {
			t.Errorf("%+v: approval request %+v", p, req)
		}
		if r := keelgenkit.Restart(p, "grant"); r != nil {
			t.Errorf("%+v: restart %+v", p, r)
		}
	}
}

// A handler that asks its caller a question is a Genkit interrupt carrying
// the request; the flow answers it (the person confirms) and resumes with
// Answer, and the call runs to its end once, the model reading its result.
func TestFlowAnswersAHandlersQuestion(t *testing.T) {
	ctx := context.Background()
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	step := frameworktest.AskStep()
	model := &scripted{steps: []frameworktest.Step{step}, read: map[string]string{}}
	g := genkit.Init(ctx)
	m := genkit.DefineModel(g, "scripted/asking", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, model.generate)
	tools, err := keelgenkit.Tools(ctx, fx.Exec, keelgenkit.Options{Context: fx.Context, Accepts: ask.Elicitation})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithPrompt("Is INC-1 right?"))
	if err != nil {
		t.Fatal(err)
	}
	interrupts := 0
	for resp.FinishReason == ai.FinishReasonInterrupted {
		var restarts []*ai.Part
		for _, p := range resp.Interrupts() {
			interrupts++
			requests, ok := keelgenkit.InputRequests(p)
			if !ok {
				t.Fatalf("not keel's input request: %+v", p.Metadata)
			}
			answers := map[string]json.RawMessage{}
			for key, r := range requests {
				if answers[key], err = fx.Answer(ctx, key, r); err != nil {
					t.Fatal(err)
				}
			}
			restarts = append(restarts, keelgenkit.Answer(p, answers))
		}
		resp, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithMessages(resp.History()...), ai.WithToolRestarts(restarts...))
		if err != nil {
			t.Fatal(err)
		}
	}
	if interrupts != 1 || fx.Runs(frameworktest.Confirm) != 1 {
		t.Fatalf("%d interrupts, the handler ran to its end %d times; want 1, 1", interrupts, fx.Runs(frameworktest.Confirm))
	}
	if msg := frameworktest.Check(step, model.read["call_0"]); msg != "" || !strings.Contains(model.read["call_0"], "confirmed") {
		t.Fatalf("%s: the model read %s", msg, model.read["call_0"])
	}
	// Without Accepts the handler cannot ask: input_unavailable, no interrupt.
	plain, err := keelgenkit.Tools(ctx, fx.Exec, keelgenkit.Options{Context: fx.Context})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(plain...), ai.WithPrompt("Is INC-1 right?"))
	if err != nil || resp.FinishReason == ai.FinishReasonInterrupted || !strings.Contains(model.read["call_0"], string(runtime.CodeInputUnavailable)) {
		t.Fatalf("without Accepts: %v, %s, the model read %s", err, resp.FinishReason, model.read["call_0"])
	}
}
