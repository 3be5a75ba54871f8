package anthropicrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/internal/frameworktest"
	"github.com/keelgen/keel/runtime"
)

// The runner plays the six steps against a Messages API on loopback: each
// tool_result is keel's result with its stable code (is_error for a
// failure), but for the unknown name, which the runner answers itself; the
// write waits while Options.Approve asks a person, and runs once with the
// grant; no handler runs that must not.
func TestRunnerPlaysTheSteps(t *testing.T) {
	fx, err := frameworktest.New()
	if err != nil {
		t.Fatal(err)
	}
	steps := frameworktest.Steps()
	var uses []string
	for i, st := range steps {
		uses = append(uses, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%q,"input":%s}`, i, st.Tool, st.Arguments))
	}
	toolTurn := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},"content":[` +
		strings.Join(uses, ",") + `]}`
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			io.WriteString(w, toolTurn)
			return
		}
		io.WriteString(w, finalTurn)
	}))
	defer srv.Close()
	var asked []runtime.ApprovalRequest
	tools, err := anthropicrunner.Tools(fx.Exec, anthropicrunner.Options{Context: fx.Context,
		Approve: func(ctx context.Context, req runtime.ApprovalRequest) (string, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return fx.Approve(ctx, req)
		}})
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
	var second struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	if err := json.Unmarshal([]byte(bodies[1]), &second); err != nil {
		t.Fatal(err)
	}
	read := map[string]string{}
	failed := map[string]bool{}
	for _, c := range second.Messages[len(second.Messages)-1].Content {
		if c.Type == "tool_result" && len(c.Content) > 0 {
			read[c.ToolUseID], failed[c.ToolUseID] = strings.TrimPrefix(c.Content[0].Text, "Error: "), c.IsError
		}
	}
	for i, st := range steps {
		id := fmt.Sprint("toolu_", i)
		if st.Code == runtime.CodeApprovalRequired {
			st.Code, st.Runs = "", frameworktest.Ticket // Approve's grant ran it
		}
		if st.Code == runtime.CodeUnknownTool {
			if !failed[id] || !strings.Contains(read[id], "not found") {
				t.Errorf("unknown: the runner answered %q (is_error %v)", read[id], failed[id])
			}
			continue
		}
		if msg := frameworktest.Check(st, read[id]); msg != "" {
			t.Error(msg)
		}
		if failed[id] != (st.Code != "") {
			t.Errorf("%s: is_error %v", st.Name, failed[id])
		}
	}
	if len(asked) != 1 || asked[0].Tool != frameworktest.Ticket {
		t.Fatalf("asked to approve %+v", asked)
	}
	if fx.Runs(frameworktest.Lookup) != 2 || fx.Runs(frameworktest.Crash) != 1 || fx.Runs(frameworktest.Ticket) != 1 {
		t.Fatalf("handler runs: lookup %d, crash %d, ticket %d", fx.Runs(frameworktest.Lookup), fx.Runs(frameworktest.Crash), fx.Runs(frameworktest.Ticket))
	}
}
