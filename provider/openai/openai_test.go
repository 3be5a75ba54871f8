package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/contenttest"
	"github.com/keelgen/keel/internal/testing/jsontest"
	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// fakeOpenAI records the request body and answers with reply.
func fakeOpenAI(t *testing.T, reply string) (*httptest.Server, *[]byte) {
	t.Helper()
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, &body
}

func executor(t *testing.T) *runtime.Executor {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

const chatReply = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
 {"id":"call_1","type":"function","function":{"name":"lookup_incident","arguments":"{\"incident_id\":\"INC-001\"}"}},
 {"id":"call_2","type":"function","function":{"name":"lookup_incident","arguments":"{\"incident_id\":42}"}}]}}]}`

func TestChatCompletionsWithTheSDK(t *testing.T) {
	for _, strict := range []bool{false, true} {
		a := openai.New(generated.ModelTools(), openai.Options{Strict: strict})
		keel, err := json.Marshal(a.ChatTools())
		if err != nil {
			t.Fatal(err)
		}
		// The SDK accepts keel's definitions as its own tool params ...
		var params []sdk.ChatCompletionToolUnionParam
		if err := json.Unmarshal(keel, &params); err != nil {
			t.Fatalf("SDK rejects keel's tools: %v", err)
		}
		srv, body := fakeOpenAI(t, chatReply)
		client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
		completion, err := client.Chat.Completions.New(context.Background(), sdk.ChatCompletionNewParams{
			Model: "gpt-test", Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("What broke in INC-001?")}, Tools: params})
		if err != nil {
			t.Fatal(err)
		}
		// ... and the request it sends carries exactly keel's definitions.
		var sent struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(*body, &sent); err != nil {
			t.Fatal(err)
		}
		if jsontest.Canonical(t, sent.Tools) != jsontest.Canonical(t, json.RawMessage(keel)) {
			t.Fatalf("strict=%v: the SDK sent\n%s\nkeel emitted\n%s", strict, sent.Tools, keel)
		}
		for _, tool := range a.ChatTools() {
			if tool.Function.Strict != strict {
				t.Errorf("%s: strict %v", tool.Function.Name, tool.Function.Strict)
			}
			if !strict && string(tool.Function.Parameters) != string(generated.ToolSet().Lookup(tool.Function.Name).Info().InputSchema) {
				t.Errorf("%s: non-strict parameters are not keel's schema", tool.Function.Name)
			}
		}

		// The SDK's tool calls become ToolCalls; results go back with their code.
		exec := executor(t)
		var codes []runtime.Code
		for _, tc := range completion.Choices[0].Message.ToolCalls {
			call := a.Call(tc.ID, tc.Function.Name, tc.Function.Arguments)
			if call.ID != tc.ID || call.Name != generated.ToolLookupIncident {
				t.Fatalf("call %+v", call)
			}
			r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
			codes = append(codes, r.Code())
			msg := openai.ChatResult(r)
			if jsontest.Canonical(t, msg) != jsontest.Canonical(t, sdk.ToolMessage(msg.Content, msg.ToolCallID)) {
				t.Errorf("keel's tool message %s differs from the SDK's", jsontest.Canonical(t, msg))
			}
			if !r.OK && !strings.Contains(msg.Content, `"code":"`+string(r.Code())+`"`) {
				t.Errorf("failed result without its code: %s", msg.Content)
			}
		}
		if len(codes) != 2 || codes[0] != "" || codes[1] != runtime.CodeInvalidArguments {
			t.Fatalf("codes %v", codes)
		}
	}
}

const responsesReply = `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[
 {"type":"function_call","id":"fc_1","call_id":"call_9","name":"create_ticket","arguments":"{\"incident_id\":\"INC-001\",\"summary\":\"raise pool size\"}","status":"completed"}]}`

func TestResponsesWithTheSDK(t *testing.T) {
	a := openai.New(generated.ModelTools(), openai.Options{Strict: true})
	keel, _ := json.Marshal(a.ResponsesTools())
	var params []responses.ToolUnionParam
	if err := json.Unmarshal(keel, &params); err != nil {
		t.Fatalf("SDK rejects keel's tools: %v", err)
	}
	srv, body := fakeOpenAI(t, responsesReply)
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("open a ticket")}, Tools: params})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(*body, &sent)
	if jsontest.Canonical(t, sent.Tools) != jsontest.Canonical(t, json.RawMessage(keel)) {
		t.Fatalf("the SDK sent\n%s\nkeel emitted\n%s", sent.Tools, keel)
	}
	item := resp.Output[0]
	call := a.Call(item.CallID, item.Name, item.Arguments.OfString)
	r := executor(t).Execute(context.Background(), runtime.ExecutionContext{}, call)
	if call.ID != "call_9" || r.Code() != runtime.CodeApprovalRequired {
		t.Fatalf("call %+v result %+v", call, r.Error)
	}
	out := openai.ResponsesResult(r)
	if out.Type != "function_call_output" || out.CallID != "call_9" || !strings.Contains(out.Output, `"code":"approval_required"`) {
		t.Fatalf("output %+v", out)
	}
}

// Strict mode: optional members become required and nullable, and the null
// a model sends for them is read as absent again.
func TestStrictMode(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"},
		"limit":{"type":"integer","minimum":1},"level":{"type":"string","enum":["a","b"]},
		"inner":{"type":"object","properties":{"flag":{"type":"boolean"},"note":{"type":"string"}},"required":["flag"],"additionalProperties":false}},
		"required":["q","inner"],"additionalProperties":false}`)
	out, problems := strictForm(schema)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	// In the author's order: the model generates the members in it.
	want := `{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"},"limit":{"type":["integer","null"],"minimum":1},"level":{"type":["string","null"],"enum":["a","b",null]},"inner":{"type":"object","properties":{"flag":{"type":"boolean"},"note":{"type":["string","null"]}},"required":["flag","note"],"additionalProperties":false}},"required":["inner","level","limit","q"],"additionalProperties":false}`
	if string(out) != want {
		t.Fatalf("strict schema\n%s\nwant\n%s", out, want)
	}
	a := openai.New([]runtime.ModelTool{{Name: "s", Description: "d", Parameters: schema}}, openai.Options{Strict: true})
	call := a.Call("c", "s", `{"q":"x","limit":null,"level":null,"inner":{"flag":true,"note":null}}`)
	if string(call.Arguments) != `{"q":"x","inner":{"flag":true}}` {
		t.Fatalf("nulls for optional members kept: %s", call.Arguments)
	}
	// A null for a required member stays, so the executor rejects it.
	if call := a.Call("c", "s", `{"q":null,"inner":{"flag":true}}`); !strings.Contains(string(call.Arguments), `"q":null`) {
		t.Fatalf("a required null was dropped: %s", call.Arguments)
	}
	// Arguments that do not parse pass through untouched.
	if call := a.Call("c", "s", `{"q":"x","q":"y"}`); string(call.Arguments) != `{"q":"x","q":"y"}` {
		t.Fatalf("malformed arguments rewritten: %s", call.Arguments)
	}
}

func TestStrictProblems(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"s":{"type":"string","not":{"minLength":3}}},"required":["s"],"additionalProperties":false}`:   `s: keyword "not" is not supported in strict mode`, // a string's reserved values are said in words (internal/forms)
		`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"additionalProperties":false}`: `m: a map (additionalProperties with a schema) cannot be expressed in strict mode`,
		`{"type":"object","properties":{"v":{}},"additionalProperties":false}`:                                                         `v: a value of any type cannot be expressed in strict mode`,
	} {
		got := openai.Problems(json.RawMessage(schema))
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s:\n%v\nwant %q", schema, got, want)
		}
	}
	// A tool that cannot be strict is offered non-strict, with keel's schema.
	bad := json.RawMessage(`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"],"additionalProperties":false}`)
	tools := openai.New([]runtime.ModelTool{{Name: "b", Description: "d", Parameters: bad}}, openai.Options{Strict: true}).ChatTools()
	if tools[0].Function.Strict || string(tools[0].Function.Parameters) != string(bad) {
		t.Fatalf("non-strict fallback: %+v", tools[0])
	}
}

// A keyword strict mode does not take, but a model can read as words, moves
// into the member's description, and the tool stays strict; the executor
// still enforces the schema as generated.
func TestStrictKeepsChecksInWords(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"code":{"type":"string","description":"The code.","minLength":3,"maxLength":8},
		"link":{"type":"string","format":"uri"},
		"tags":{"type":"array","items":{"type":"string","maxLength":1},"uniqueItems":true}},
		"required":["code","link","tags"],"additionalProperties":false}`)
	out, problems := strictForm(schema)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := `{"type":"object","properties":{"code":{"type":"string","description":"The code. (at least 3 characters; at most 8 characters)"},"link":{"type":"string","description":"(format: uri)"},"tags":{"type":"array","items":{"type":"string","description":"(at most 1 character)"},"description":"(no item twice)"}},"required":["code","link","tags"],"additionalProperties":false}`
	if string(out) != want {
		t.Fatalf("strict schema\n%s\nwant\n%s", out, want)
	}
	ran := 0
	tool := runtime.NewTool(runtime.ToolInfo{Name: "w", Version: "1", Effect: runtime.EffectRead, Description: "W.",
		InputSchema: schema, OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			Code string   `json:"code"`
			Link string   `json:"link"`
			Tags []string `json:"tags"`
		}) (struct{}, error) {
			ran++
			return struct{}{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	a := openai.New(runtime.ModelTools(keeltest.Of(tool)), openai.Options{Strict: true})
	if !a.ChatTools()[0].Function.Strict {
		t.Fatal("the tool is not offered strict")
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, a.Call("c", "w", `{"code":"ab","link":"https://x.example","tags":["a"]}`))
	if r.Code() != runtime.CodeInvalidArguments || ran != 0 {
		t.Fatalf("a code under minLength: %+v, %d runs", r.Error, ran)
	}
}

// The model reads a tool's declared error codes in its description, in the
// Chat and the Responses form alike, since neither has a field for them.
func TestDefinitionsNameDeclaredCodes(t *testing.T) {
	a := openai.New(generated.ModelTools(), openai.Options{Strict: true})
	for _, d := range []string{a.ChatTools()[1].Function.Description, a.ResponsesTools()[1].Description} {
		if d != "Returns one incident record by its id. Errors it may return: incident_not_found." {
			t.Errorf("description %q", d)
		}
	}
}

// Deferred tools go into a namespace per handler package, with
// defer_loading, after the tools loaded up front, and tool_search last;
// openai-go's Responses types read them.
func TestDeferredResponsesTools(t *testing.T) {
	tools := generated.ModelTools()
	tools[0].Deferred, tools[0].Namespace = true, "example"
	defs := openai.New(tools, openai.Options{Strict: true}).ResponsesTools()
	if len(defs) != 3 || defs[0].Type != "function" || defs[0].Name != tools[1].Name ||
		defs[1].Type != "namespace" || defs[1].Name != "example" || len(defs[1].Tools) != 1 || !defs[1].Tools[0].DeferLoading ||
		defs[2].Type != "tool_search" {
		t.Fatalf("definitions %+v", defs)
	}
	b, _ := json.Marshal(defs)
	if strings.Contains(string(b), `"type":"namespace","name":"example","description":"Tools of example.","strict"`) {
		t.Fatalf("a namespace carries strict: %s", b)
	}
	var params []responses.ToolUnionParam
	if err := json.Unmarshal(b, &params); err != nil {
		t.Fatal(err)
	}
	if params[1].OfNamespace == nil || params[2].OfToolSearch == nil {
		t.Fatalf("openai-go read %s as %+v", b, params)
	}
}

// A result with content, in the Responses API: the JSON as input_text, an
// input_image, the PDF as input_file data, the CSV as input_text, the PDF
// link as input_file URL, all read by the SDK's own function_call_output
// param; audio and the page link described and marked omitted. In Chat
// Completions every block is described and omitted.
func TestContentBlocksReadAsSDKParams(t *testing.T) {
	out := openai.ResponsesResult(contenttest.Result())
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var param responses.ResponseInputItemFunctionCallOutputParam
	if err := json.Unmarshal(b, &param); err != nil {
		t.Fatalf("the SDK rejects keel's output: %v\n%s", err, b)
	}
	if jsontest.Canonical(t, param) != jsontest.Canonical(t, json.RawMessage(b)) {
		t.Fatalf("the SDK reads\n%s\nkeel wrote\n%s", jsontest.Canonical(t, param), b)
	}
	var kinds []string
	for _, it := range param.Output.OfResponseFunctionCallOutputItemArray {
		switch {
		case it.OfInputText != nil:
			kinds = append(kinds, "text "+strings.SplitN(it.OfInputText.Text, ":", 2)[0])
		case it.OfInputImage != nil:
			kinds = append(kinds, "image "+strings.SplitN(it.OfInputImage.ImageURL.Value, ",", 2)[0])
		case it.OfInputFile != nil && it.OfInputFile.FileData.Valid():
			kinds = append(kinds, "file "+it.OfInputFile.Filename.Value+" "+strings.SplitN(it.OfInputFile.FileData.Value, ",", 2)[0])
		case it.OfInputFile != nil:
			kinds = append(kinds, "file url "+it.OfInputFile.FileURL.Value)
		}
	}
	want := `text {"call_id",image data:image/png;base64,file q3.pdf data:application/pdf;base64,text Resource file,file url https://example.com/q3.pdf`
	if strings.Join(kinds, ",") != want {
		t.Fatalf("items %v\nwant %s", kinds, want)
	}
	if !strings.Contains(out.Output, `"type":"audio","mime_type":"audio/wav","bytes":14,"omitted":"the Responses API`) {
		t.Errorf("result JSON %s", out.Output)
	}
	chat := openai.ChatResult(contenttest.Result())
	if strings.Count(chat.Content, `"omitted":"OpenAI Chat Completions tool messages carry text only"`) != 6 || strings.Contains(chat.Content, "keel-pixels") {
		t.Errorf("chat message %s", chat.Content)
	}
	// A result without content stays one string.
	plain, _ := json.Marshal(openai.ResponsesResult(runtime.ToolResult{CallID: "c", OK: true, Data: json.RawMessage(`{}`)}))
	if !strings.HasPrefix(string(plain), `{"type":"function_call_output","call_id":"c","output":"{`) {
		t.Errorf("plain output %s", plain)
	}
}

// strictForm is the strict parameters the adapter offers for schema, or why
// it offers none.
func strictForm(schema json.RawMessage) (json.RawMessage, []string) {
	if problems := openai.Problems(schema); len(problems) > 0 {
		return nil, problems
	}
	tool := openai.New([]runtime.ModelTool{{Name: "s", Description: "S.", Parameters: schema}}, openai.Options{Strict: true}).ChatTools()[0]
	if !tool.Function.Strict {
		return nil, []string{"not offered strict"}
	}
	return tool.Function.Parameters, nil
}
