package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/jsontest"
	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/runtime"
)

const reply = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
 "content":[{"type":"text","text":"Looking it up."},
  {"type":"tool_use","id":"toolu_1","name":"lookup_incident","input":{"incident_id":"INC-001"}},
  {"type":"tool_use","id":"toolu_2","name":"lookup_incident","input":{"incident_id":"INC-404"}},
  {"type":"tool_use","id":"toolu_3","name":"delete_prod","input":{}}]}`

func TestMessagesWithTheSDK(t *testing.T) {
	keel, err := json.Marshal(anthropic.Tools(generated.ModelTools()))
	if err != nil {
		t.Fatal(err)
	}
	var params []sdk.ToolUnionParam
	if err := json.Unmarshal(keel, &params); err != nil {
		t.Fatalf("SDK rejects keel's tools: %v", err)
	}
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	msg, err := client.Messages.New(context.Background(), sdk.MessageNewParams{
		Model: "claude-test", MaxTokens: 256, Tools: params,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("What broke in INC-001?"))}})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &sent)
	if jsontest.Canonical(t, sent.Tools) != jsontest.Canonical(t, json.RawMessage(keel)) {
		t.Fatalf("the SDK sent\n%s\nkeel emitted\n%s", sent.Tools, keel)
	}

	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, block := range msg.Content {
		if block.Type != "tool_use" {
			continue
		}
		call := anthropic.ToolCall(anthropic.ToolUse{Type: block.Type, ID: block.ID, Name: block.Name, Input: block.Input})
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
		res := anthropic.Result(r)
		if jsontest.Canonical(t, res) != jsontest.Canonical(t, sdk.NewToolResultBlock(res.ToolUseID, res.Content[0].Text, res.IsError)) {
			t.Errorf("keel's tool_result %s differs from the SDK's", jsontest.Canonical(t, res))
		}
		if res.IsError != !r.OK || (!r.OK && !strings.Contains(res.Content[0].Text, `"code":"`+string(r.Code())+`"`)) {
			t.Errorf("result block %+v", res)
		}
		got = append(got, call.ID+"="+string(r.Code()))
	}
	if strings.Join(got, ",") != "toolu_1=,toolu_2=incident_not_found,toolu_3=unknown_tool" {
		t.Fatalf("results %v", got)
	}
}

// The model reads a tool's declared error codes in its description.
func TestDefinitionsNameDeclaredCodes(t *testing.T) {
	if d := anthropic.Tools(generated.ModelTools())[1].Description; d != "Returns one incident record by its id. Errors it may return: incident_not_found." {
		t.Errorf("description %q", d)
	}
}
