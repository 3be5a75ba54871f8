package bedrock_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/keelgen/keel/generated"
	conformance "github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/testing/contenttest"
	"github.com/keelgen/keel/internal/testing/jsontest"
	"github.com/keelgen/keel/provider/bedrock"
	"github.com/keelgen/keel/runtime"
)

// Through aws-sdk-go-v2's Bedrock runtime client, to a server on loopback:
// Converse sends keel's schemas as toolSpec inputSchema json; the toolUse
// block the SDK parses from the reply runs through the executor; the
// toolResult goes back in the next request with keel's result as json, and
// status "error" on a failure (not with NoErrorStatus).
func TestConverseRoundTrip(t *testing.T) {
	replies := []string{
		`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tu-1","name":"lookup_incident","input":{"incident_id":"INC-001"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`,
		`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tu-2","name":"lookup_incident","input":{"incident_id":"nope"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`,
		`{"output":{"message":{"role":"assistant","content":[{"text":"done"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`,
	}
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, replies[len(bodies)-1])
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	cfg, err := bedrock.Tools(generated.ModelTools(), bedrock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	messages := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "What happened in INC-001?"}}}}
	for turn := 0; turn < 2; turn++ {
		out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.test"), Messages: messages, ToolConfig: cfg})
		if err != nil {
			t.Fatal(err)
		}
		msg := out.Output.(*types.ConverseOutputMemberMessage).Value
		use := msg.Content[0].(*types.ContentBlockMemberToolUse).Value
		result, err := bedrock.Result(exec.Execute(ctx, runtime.ExecutionContext{}, bedrock.Call(use)), bedrock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		messages = append(messages, msg, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{result}})
	}
	if _, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.test"), Messages: messages, ToolConfig: cfg}); err != nil {
		t.Fatal(err)
	}

	// The first request carried keel's schemas.
	var first struct {
		ToolConfig struct {
			Tools []struct {
				ToolSpec struct {
					Name, Description string
					InputSchema       struct{ JSON json.RawMessage } `json:"inputSchema"`
				} `json:"toolSpec"`
			} `json:"tools"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &first); err != nil || len(first.ToolConfig.Tools) != 2 {
		t.Fatalf("first request: %v\n%s", err, bodies[0])
	}
	for i, m := range generated.ModelTools() {
		spec := first.ToolConfig.Tools[i].ToolSpec
		if spec.Name != m.Name || spec.Description != m.DescriptionForModel() || !jsontest.Equal(t, spec.InputSchema.JSON, m.Parameters) {
			t.Errorf("toolSpec %+v, want keel's %s", spec, m.Parameters)
		}
	}
	// The results went back: success with its data, failure with status
	// error and the stable code, nothing internal.
	last := bodies[2]
	for _, want := range []string{`"toolUseId":"tu-1"`, `"status":"success"`, `"incident_id":"INC-001"`,
		`"toolUseId":"tu-2"`, `"status":"error"`, `"code":"invalid_arguments"`} {
		if !strings.Contains(last, want) {
			t.Errorf("the last request lacks %s:\n%s", want, last)
		}
	}
}

// With NoErrorStatus a failed result carries no status, for models that
// refuse status "error"; its json still says ok false with the code.
func TestNoErrorStatus(t *testing.T) {
	r := runtime.ToolResult{CallID: "c", ToolName: "x", Error: &runtime.ToolError{Code: runtime.CodeUnknownTool, Message: "No tool with that name is available."}}
	block, err := bedrock.Result(r, bedrock.Options{NoErrorStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := block.(*types.ContentBlockMemberToolResult).Value
	if tr.Status != "" || aws.ToString(tr.ToolUseId) != "c" {
		t.Fatalf("result %+v", tr)
	}
}

// PlainSchemas writes the form Amazon Nova takes: each toolSpec's root says
// only type, properties and required, a member's pattern moves into its
// description, and the rules on the arguments as a whole (one of these
// members) into the tool's; the executor still refuses what breaks them.
func TestPlainSchemasForNova(t *testing.T) {
	cfg, err := bedrock.Tools(conformance.ModelTools(), bedrock.Options{PlainSchemas: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tools) != len(conformance.ModelTools()) {
		t.Fatalf("%d tools", len(cfg.Tools))
	}
	for _, tool := range cfg.Tools {
		spec := tool.(*types.ToolMemberToolSpec).Value
		raw, err := spec.InputSchema.(*types.ToolInputSchemaMemberJson).Value.MarshalSmithyDocument()
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]json.RawMessage
		if err := json.Unmarshal(raw, &root); err != nil {
			t.Fatal(err)
		}
		for k := range root {
			if k != "type" && k != "properties" && k != "required" {
				t.Errorf("%s: the root says %s: %s", aws.ToString(spec.Name), k, raw)
			}
		}
		if aws.ToString(spec.Name) == "probe" && !strings.Contains(string(raw), `(pattern \"^INC-`) {
			t.Errorf("probe: the pattern is not in words: %s", raw)
		}
		if aws.ToString(spec.Name) == "pick" && !strings.Contains(aws.ToString(spec.Description), "(give exactly one of: uid; name; org and slug; give at least one of: title; tags; note needs author") {
			t.Errorf("pick: the rules on its arguments as a whole are not in its description: %s", aws.ToString(spec.Description))
		}
	}
	exec, err := conformance.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, bedrock.Call(types.ToolUseBlock{
		ToolUseId: aws.String("t1"), Name: aws.String("probe"), Input: document.NewLazyDocument(map[string]any{"incident_id": "nope"})}))
	if r.OK || r.Error.Code != "invalid_arguments" {
		t.Errorf("a pattern said only in words: %+v", r)
	}
}

// The SDK decodes a toolUse input into Go maps before keel sees it, with
// encoding/json: a member named twice keeps its last value and a lone
// surrogate becomes U+FFFD, so keel's refusal of both cannot apply on this
// path (docs/providers.md says so). What keel still sees it refuses: an
// input that is no object (an array, a string, a number, null, or none)
// is invalid_arguments, and no handler runs.
func TestConverseInputsKeelCanStillSee(t *testing.T) {
	var reply string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tu","name":"lookup_incident",`+reply+
			`}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`)
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	use := func(input string) types.ToolUseBlock {
		t.Helper()
		reply = input
		out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("m"),
			Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberToolUse).Value
	}
	for _, input := range []string{`"input":["INC-001"]`, `"input":"INC-001"`, `"input":1`, `"input":null`, `"x":1`} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, bedrock.Call(use(input)))
		if r.Code() != runtime.CodeInvalidArguments {
			t.Errorf("%s: %s %+v", input, r.Code(), r.Error)
		}
	}
	// What is lost: the SDK hands keel the last of two members and U+FFFD
	// for a lone surrogate; other providers' raw bytes keel refuses.
	call := bedrock.Call(use(`"input":{"incident_id":"INC-002","incident_id":"INC-001"}`))
	if string(call.Arguments) != `{"incident_id":"INC-001"}` {
		t.Errorf("a duplicate member reached keel as %s; if the SDK now keeps the bytes, refuse it and update docs/providers.md", call.Arguments)
	}
	call = bedrock.Call(use(`"input":{"incident_id":"INC-001\ud800"}`))
	if !strings.Contains(string(call.Arguments), "\ufffd") {
		t.Errorf("a lone surrogate reached keel as %q; if the SDK now keeps the bytes, refuse it and update docs/providers.md", call.Arguments)
	}
}

// A result with content, sent by the SDK's Converse client to a server on
// loopback: the JSON first, then the image and three documents (the PDF,
// the CSV, the text) with neutral names, as the SDK serializes them; the
// audio and the links are described in the JSON and marked omitted.
func TestContentBlocksThroughConverse(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`)
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	r := contenttest.Result()
	r.Content = append(r.Content, runtime.TextResource("file:///notes.txt", "text/plain", "all green"))
	result, err := bedrock.Result(r, bedrock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	use := &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("call_7"), Name: aws.String("chart"), Input: document.NewLazyDocument(map[string]any{})}}
	messages := []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Chart it."}}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{use}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{result}},
	}
	if _, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.test"), Messages: messages}); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []struct {
			Content []struct {
				ToolResult *struct {
					Content []struct {
						JSON     json.RawMessage `json:"json"`
						Image    *struct{ Format string }
						Document *struct{ Format, Name string }
					} `json:"content"`
				} `json:"toolResult"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	var got []string
	var text string
	for _, c := range sent.Messages[2].Content[0].ToolResult.Content {
		switch {
		case c.JSON != nil:
			text = string(c.JSON)
			got = append(got, "json")
		case c.Image != nil:
			got = append(got, "image "+c.Image.Format)
		case c.Document != nil:
			got = append(got, "document "+c.Document.Format+" "+c.Document.Name)
		}
	}
	if want := "json,image png,document pdf document 1,document csv document 2,document txt document 3"; strings.Join(got, ",") != want {
		t.Fatalf("toolResult content %v\nwant %s\n%s", got, want, body)
	}
	if !strings.Contains(string(body), `"bytes":"iVBORw0KGgprZWVsLXBpeGVscw=="`) || !strings.Contains(text, `{"bytes":14,"mime_type":"audio/wav","omitted":"Bedrock's toolResult has no place for audio of this type","type":"audio"}`) ||
		strings.Contains(text, "keel-pixels") {
		t.Errorf("request %s", body)
	}
}
