package anthropicrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// The corpus through the SDK's tool runner against a Messages API on
// loopback: it lists only what the caller may call, every call to a listed
// tool whose input is a JSON value is keel's answer, audited; a name it
// does not list the runner answers itself, and nothing runs.
func TestDoorToolRunner(t *testing.T) {
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := anthropicrunner.Tools(ctx, f.Exec, anthropicrunner.Options{Context: func(context.Context) runtime.ExecutionContext { return doortest.Caller() }})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tl := range tools {
		listed = append(listed, tl.Name())
	}
	if err := doortest.CheckListed(listed); err != nil {
		t.Error(err)
	}
	var cases []doortest.Case
	var uses []string
	for _, c := range doortest.Calls() {
		if !c.Decodable() || len(c.Arguments) > 1<<19 {
			continue // the API's input is a JSON value; the large ones are the executor's and the byte doors'
		}
		name, _ := json.Marshal(c.Tool)
		uses = append(uses, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%s,"input":%s}`, len(cases), name, c.Arguments))
		cases = append(cases, c)
	}
	toolTurn := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},"content":[` +
		strings.Join(uses, ",") + `]}`
	srv, bodies := messagesAPI(t, toolTurn)
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner(tools, sdk.BetaToolRunnerParams{DisableThread: true, BetaMessageNewParams: sdk.BetaMessageNewParams{
		Model: "claude-test", MaxTokens: 256, Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("go"))},
	}})
	if _, err := runner.RunToCompletion(ctx); err != nil {
		t.Fatal(err)
	}
	results := toolResults(t, bodies()[1])
	reached := 0
	for i, c := range cases {
		r := results[fmt.Sprint("toolu_", i)]
		if c.Tool != doortest.Probe {
			if !r.isError || !strings.Contains(r.text, "not found") {
				t.Errorf("%s: the runner answered %+v", c.Name, r)
			}
			continue
		}
		reached++
		if err := doortest.CheckDecodedResultJSON(f, c, strings.TrimPrefix(r.text, "Error: ")); err != nil {
			t.Error(err)
		}
	}
	if f.Records() != reached {
		t.Errorf("%d audit records for %d calls that reached keel", f.Records(), reached)
	}
	t.Logf("anthropicrunner: %d calls, %d reached keel", len(cases), reached)
}
