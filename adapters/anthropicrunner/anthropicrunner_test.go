package anthropicrunner_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// model replies as Anthropic's API would: first four tool_use blocks, then,
// once it has the results, a final text.
const toolTurn = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
 "content":[{"type":"tool_use","id":"toolu_1","name":"lookup_incident","input":{"incident_id":"INC-001"}},
  {"type":"tool_use","id":"toolu_2","name":"lookup_incident","input":{"incident_id":42}},
  {"type":"tool_use","id":"toolu_3","name":"create_ticket","input":{"incident_id":"INC-001","summary":"raise the pool"}},
  {"type":"tool_use","id":"toolu_4","name":"lookup_incident","input":{"incident_id":"INC-404"}}]}`

const finalTurn = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1},
 "content":[{"type":"text","text":"INC-001 is the auth-api timeout."}]}`

// The SDK's own tool runner, against a server on loopback, offers keel's
// schemas and runs each tool_use through the executor: the valid call's
// result is keel's JSON; invalid arguments, a write without approval and a
// business error come back as is_error tool_results carrying keel's stable
// codes, and nothing internal.
func TestToolRunnerRunsKeelTools(t *testing.T) {
	srv, bodies := messagesAPI(t, toolTurn)
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := anthropicrunner.Tools(context.Background(), exec, anthropicrunner.Options{
		Context: func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{Principal: "alice"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner(tools, sdk.BetaToolRunnerParams{DisableThread: true, BetaMessageNewParams: sdk.BetaMessageNewParams{
		Model: "claude-test", MaxTokens: 256,
		Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("What broke in INC-001?"))},
	}})
	final, err := runner.RunToCompletion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if final.Content[0].Text != "INC-001 is the auth-api timeout." || len(bodies()) != 2 {
		t.Fatalf("final %+v after %d requests", final, len(bodies()))
	}
	var first struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(bodies()[0]), &first); err != nil || len(first.Tools) != 2 || first.Tools[1].Name != "lookup_incident" ||
		!strings.Contains(string(first.Tools[1].InputSchema), `"pattern":"^INC-[0-9]{3,}$"`) {
		t.Fatalf("the first request's tools: %v\n%s", err, bodies()[0])
	}
	results := map[string]string{}
	for id, r := range toolResults(t, bodies()[1]) {
		results[id] = map[bool]string{true: "error", false: "ok"}[r.isError] + " " + r.text
	}
	for id, want := range map[string]string{
		"toolu_1": `ok {"call_id":"runner-`,
		"toolu_2": `error Error: {"call_id":"runner-`,
		"toolu_3": `error Error: {"call_id":"runner-`,
		"toolu_4": `error Error: {"call_id":"runner-`,
	} {
		if !strings.HasPrefix(results[id], want) {
			t.Errorf("%s: %q, want %q...", id, results[id], want)
		}
	}
	for id, code := range map[string]string{"toolu_2": "invalid_arguments", "toolu_3": "approval_required", "toolu_4": "incident_not_found"} {
		if !strings.Contains(results[id], `"code":"`+code+`"`) {
			t.Errorf("%s: %q lacks code %s", id, results[id], code)
		}
	}
	if !strings.Contains(results["toolu_1"], `"service":"auth-api"`) || strings.Contains(bodies()[1], "/work/") {
		t.Errorf("results %v", results)
	}
}

// What the runner hands a tool is the model's input decoded into an any and
// encoded again, not its bytes: the package doc says so, and this pins it,
// so a change in the SDK shows here.
func TestRunnerInputIsReencoded(t *testing.T) {
	var got json.RawMessage
	tool := &recorder{got: &got}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if got == nil {
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
				"content":[{"type":"tool_use","id":"t","name":"rec","input":{"z":1.50,"n":9007199254740993,"a":"x"}}]}`)
			return
		}
		io.WriteString(w, finalTurn)
	}))
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner([]sdk.BetaTool{tool}, sdk.BetaToolRunnerParams{DisableThread: true, BetaMessageNewParams: sdk.BetaMessageNewParams{
		Model: "m", MaxTokens: 16, Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("go"))}}})
	if _, err := runner.RunToCompletion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"a":"x","n":9007199254740992,"z":1.5}` {
		t.Fatalf("the runner handed the tool %s", got)
	}
}

type recorder struct{ got *json.RawMessage }

func (r *recorder) Name() string        { return "rec" }
func (r *recorder) Description() string { return "Records." }
func (r *recorder) InputSchema() sdk.BetaToolInputSchemaParam {
	return sdk.BetaToolInputSchemaParam{Properties: map[string]any{}}
}
func (r *recorder) Execute(_ context.Context, in json.RawMessage) ([]sdk.BetaToolResultBlockParamContentUnion, error) {
	*r.got = append(json.RawMessage(nil), in...)
	return []sdk.BetaToolResultBlockParamContentUnion{{OfText: &sdk.BetaTextBlockParam{Text: "ok"}}}, nil
}

// messagesAPI plays Anthropic's Messages API on loopback: its first reply
// is first, every later one finalTurn. bodies are the requests it got.
func messagesAPI(t *testing.T, first string) (srv *httptest.Server, bodies func() []string) {
	var mu sync.Mutex
	var got []string
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		n := len(got)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			io.WriteString(w, first)
			return
		}
		io.WriteString(w, finalTurn)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

type toolResult struct {
	text    string
	isError bool
}

// toolResults are the tool_result blocks of a request's last message, by
// tool_use id.
func toolResults(t *testing.T, body string) map[string]toolResult {
	var req struct {
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
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	out := map[string]toolResult{}
	for _, c := range req.Messages[len(req.Messages)-1].Content {
		if c.Type == "tool_result" && len(c.Content) > 0 {
			out[c.ToolUseID] = toolResult{text: c.Content[0].Text, isError: c.IsError}
		}
	}
	return out
}
