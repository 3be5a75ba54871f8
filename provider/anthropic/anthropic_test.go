package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/contenttest"
	"github.com/keelgen/keel/internal/testing/jsontest"
	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/runtime"
)

const reply = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
 "content":[{"type":"text","text":"Looking it up."},
  {"type":"tool_use","id":"toolu_1","name":"lookup_incident","input":{"incident_id":"INC-001"}},
  {"type":"tool_use","id":"toolu_2","name":"lookup_incident","input":{"incident_id":"INC-404"}},
  {"type":"tool_use","id":"toolu_3","name":"delete_prod","input":{}}]}`

func TestMessagesWithTheSDK(t *testing.T) {
	keel, err := json.Marshal(defs(t, generated.ModelTools()))
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
		call := anthropic.Call(anthropic.ToolUse{Type: block.Type, ID: block.ID, Name: block.Name, Input: block.Input})
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
	if d := defs(t, generated.ModelTools())[1].Description; d != "Returns one incident record by its id. Errors it may return: incident_not_found." {
		t.Errorf("description %q", d)
	}
}

// Strict where Anthropic's strict mode can take a schema: the bounds it does
// not take are said in words (the executor still enforces them), the
// author's order kept; past the per-request budget, tools are offered as
// usual, in name order.
func TestStrictTools(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"count":{"type":"integer","description":"How many.","minimum":1,"maximum":10},
		"name":{"type":"string","maxLength":20}},
		"required":["count"],"additionalProperties":false}`)
	tools := strictDefs(t, []runtime.ModelTool{{Name: "t", Description: "T.", Parameters: schema}})
	want := `{"type":"object","properties":{"count":{"type":"integer","description":"How many. (at least 1; at most 10)"},"name":{"type":"string","description":"(at most 20 characters)"}},"required":["count"],"additionalProperties":false}`
	if !tools[0].Strict || string(tools[0].InputSchema) != want {
		t.Fatalf("strict tool %+v\nwant %s", tools[0], want)
	}
	mapSchema := json.RawMessage(`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"],"additionalProperties":false}`)
	if tools := strictDefs(t, []runtime.ModelTool{{Name: "m", Description: "M.", Parameters: mapSchema}}); tools[0].Strict || string(tools[0].InputSchema) != string(mapSchema) {
		t.Fatalf("a map offered strict: %+v", tools[0])
	}
	var many []runtime.ModelTool
	for i := range 21 {
		many = append(many, runtime.ModelTool{Name: fmt.Sprintf("t%02d", i), Description: "T.", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)})
	}
	strict := 0
	for _, t := range strictDefs(t, many) {
		if t.Strict {
			strict++
		}
	}
	if strict != 20 {
		t.Fatalf("%d of 21 tools strict, want Anthropic's budget of 20", strict)
	}
}

// The set: 40 deferred catalog tools named before 8 loaded up
// front. The budget goes to the 8 first, then to 12 deferred in name order;
// StrictToolsFirst serves the named ones before all others; the
// definitions keep the set's order either way.
func TestStrictBudgetGoesToUpFrontToolsFirst(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)
	var set []runtime.ModelTool
	for i := range 40 {
		set = append(set, runtime.ModelTool{Name: fmt.Sprintf("catalog_%02d", i), Description: "C.", Parameters: schema, Deferred: true})
	}
	for i := range 8 {
		set = append(set, runtime.ModelTool{Name: fmt.Sprintf("ops_%d", i), Description: "O.", Parameters: schema})
	}
	strictNames := func(defs []anthropic.Tool) []string {
		var out []string
		for i, d := range defs[:len(set)] {
			if d.Name != set[i].Name {
				t.Fatalf("definition %d is %s, want the set's order (%s)", i, d.Name, set[i].Name)
			}
			if d.Strict {
				out = append(out, d.Name)
			}
		}
		return out
	}
	got := strictNames(strictDefs(t, set))
	if len(got) != 20 || got[0] != "catalog_00" || got[11] != "catalog_11" || !slices.Contains(got, "ops_0") || !slices.Contains(got, "ops_7") || slices.Contains(got, "catalog_12") {
		t.Fatalf("strict: %v, want ops_0..ops_7 and catalog_00..catalog_11", got)
	}
	defs, err := anthropic.Tools(set, anthropic.Options{StrictFirst: []string{"catalog_39", "ops_3"}})
	if err != nil {
		t.Fatal(err)
	}
	got = strictNames(defs)
	if len(got) != 20 || !slices.Contains(got, "catalog_39") || !slices.Contains(got, "ops_7") || slices.Contains(got, "catalog_11") || !slices.Contains(got, "catalog_10") {
		t.Fatalf("strict with catalog_39 first: %v", got)
	}
	if _, err := anthropic.Tools(set, anthropic.Options{StrictFirst: []string{"scale_deployment"}}); err == nil || !strings.Contains(err.Error(), `no tool "scale_deployment"`) {
		t.Fatalf("an unknown name: %v", err)
	}
}

// The strict definitions read as the SDK's own tool params, strict set.
func TestStrictToolsReadAsSDKParams(t *testing.T) {
	b, err := json.Marshal(strictDefs(t, generated.ModelTools()))
	if err != nil {
		t.Fatal(err)
	}
	var params []sdk.ToolParam
	if err := json.Unmarshal(b, &params); err != nil {
		t.Fatal(err)
	}
	for _, p := range params {
		if !p.Strict.Valid() || !p.Strict.Value {
			t.Errorf("%s: strict %+v", p.Name, p.Strict)
		}
	}
}

// Deferred tools carry defer_loading and the tool search tool comes last;
// the SDK reads both.
func TestDeferredTools(t *testing.T) {
	tools := generated.ModelTools()
	tools[0].Deferred, tools[0].Namespace = true, "example"
	defs := defs(t, tools)
	if len(defs) != 3 || !defs[0].DeferLoading || defs[1].DeferLoading || defs[2].Type != anthropic.SearchTool().Type || defs[2].Name != anthropic.SearchTool().Name {
		t.Fatalf("definitions %+v", defs)
	}
	b, _ := json.Marshal(defs)
	var params []sdk.ToolUnionParam
	if err := json.Unmarshal(b, &params); err != nil {
		t.Fatal(err)
	}
	if params[0].OfTool == nil || !params[0].OfTool.DeferLoading.Value || params[2].OfToolSearchToolRegex20251119 == nil {
		t.Fatalf("the SDK read %s as %+v", b, params)
	}
}

// A result with content: its JSON first, then an image block and document
// blocks (the PDF, the CSV as text, the PDF link), all read by the SDK's
// own tool_result param; the audio and the page link are described in the
// JSON and marked omitted.
func TestContentBlocksReadAsSDKParams(t *testing.T) {
	res := anthropic.Result(contenttest.Result())
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var param sdk.ToolResultBlockParam
	if err := json.Unmarshal(b, &param); err != nil {
		t.Fatalf("the SDK rejects keel's tool_result: %v\n%s", err, b)
	}
	if jsontest.Canonical(t, param) != jsontest.Canonical(t, json.RawMessage(b)) {
		t.Fatalf("the SDK reads\n%s\nkeel wrote\n%s", jsontest.Canonical(t, param), b)
	}
	var kinds []string
	for _, c := range param.Content {
		switch {
		case c.OfText != nil:
			kinds = append(kinds, "text")
		case c.OfImage != nil && c.OfImage.Source.OfBase64 != nil:
			kinds = append(kinds, "image "+string(c.OfImage.Source.OfBase64.MediaType))
		case c.OfDocument != nil && c.OfDocument.Source.OfBase64 != nil:
			kinds = append(kinds, "document pdf "+c.OfDocument.Title.Value)
		case c.OfDocument != nil && c.OfDocument.Source.OfText != nil:
			kinds = append(kinds, "document text "+c.OfDocument.Title.Value)
		case c.OfDocument != nil && c.OfDocument.Source.OfURL != nil:
			kinds = append(kinds, "document url "+c.OfDocument.Source.OfURL.URL)
		default:
			kinds = append(kinds, "other")
		}
	}
	want := "text,image image/png,document pdf s3://reports/q3.pdf,document text file:///reports/q3.csv,document url https://example.com/q3.pdf"
	if strings.Join(kinds, ",") != want {
		t.Fatalf("content %v\nwant %s", kinds, want)
	}
	text := param.Content[0].OfText.Text
	if strings.Contains(text, "keel-pixels") || !strings.Contains(text, `"type":"audio","mime_type":"audio/wav","bytes":14,"omitted":"Anthropic's tool_result has no place for audio of this type"`) ||
		!strings.Contains(text, `"uri":"https://example.com/dash","name":"Dashboard","omitted":"a link`) {
		t.Errorf("result JSON %s", text)
	}
}

// defs and strictDefs are anthropic.Tools without and with Strict, for
// tests whose sets have no name to get wrong.
func defs(t *testing.T, tools []runtime.ModelTool) []anthropic.Tool {
	t.Helper()
	out, err := anthropic.Tools(tools, anthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func strictDefs(t *testing.T, tools []runtime.ModelTool) []anthropic.Tool {
	t.Helper()
	out, err := anthropic.Tools(tools, anthropic.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
