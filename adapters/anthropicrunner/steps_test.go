package anthropicrunner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// The runner plays the six steps against a Messages API on loopback: each
// tool_result is keel's result with its stable code (is_error for a
// failure), but for the unknown name, which the runner answers itself; the
// write waits while Options.Approve asks a person, and runs once with the
// grant; the handler that asks a question waits while Options.Answer
// answers it, and completes once; no handler runs that must not.
func TestRunnerPlaysTheSteps(t *testing.T) {
	fx, err := frameworktest.New(memstore.NewReplayStore())
	if err != nil {
		t.Fatal(err)
	}
	steps := append(frameworktest.Steps(), frameworktest.AskStep())
	var uses []string
	for i, st := range steps {
		uses = append(uses, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%q,"input":%s}`, i, st.Tool, st.Arguments))
	}
	toolTurn := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},"content":[` +
		strings.Join(uses, ",") + `]}`
	srv, bodies := messagesAPI(t, toolTurn)
	var mu sync.Mutex
	var asked []runtime.ApprovalRequest
	tools, err := anthropicrunner.Tools(context.Background(), fx.Exec, anthropicrunner.Options{Context: fx.Context,
		Approve: func(ctx context.Context, req runtime.ApprovalRequest) (string, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return fx.Approve(ctx, req)
		},
		Answer: fx.Answer, Accepts: ask.Elicitation})
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner(tools, sdk.BetaToolRunnerParams{DisableThread: true, BetaMessageNewParams: sdk.BetaMessageNewParams{
		Model: "claude-test", MaxTokens: 256,
		Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("What broke in INC-1? Open a ticket."))},
	}})
	if _, err := runner.RunToCompletion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(bodies()) != 2 {
		t.Fatalf("%d requests", len(bodies()))
	}
	results := toolResults(t, bodies()[1])
	for i, st := range steps {
		id := fmt.Sprint("toolu_", i)
		st = frameworktest.Approved(st) // Approve's grant ran it
		r := results[id]
		if st.Code == runtime.CodeUnknownTool {
			if !r.isError || !strings.Contains(r.text, "not found") {
				t.Errorf("unknown: the runner answered %+v", r)
			}
			continue
		}
		if msg := frameworktest.Check(st, strings.TrimPrefix(r.text, "Error: ")); msg != "" {
			t.Error(msg)
		}
		if r.isError != (st.Code != "") {
			t.Errorf("%s: is_error %v", st.Name, r.isError)
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
