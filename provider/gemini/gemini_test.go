package gemini_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/keelgen/keel/generated"
	conformance "github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/testing/contenttest"
	"github.com/keelgen/keel/internal/testing/jsontest"
	mcpsuite "github.com/keelgen/keel/internal/testing/mcpsuite/generated"
	"github.com/keelgen/keel/provider/gemini"
	"github.com/keelgen/keel/runtime"
)

// The declarations read as google.golang.org/genai's own types: each tool's
// name, a description naming its codes, and keel's schema as
// parametersJsonSchema, unchanged.
func TestDeclarationsReadAsGenaiTools(t *testing.T) {
	b, err := json.Marshal(geminiTools(t, generated.ModelTools()))
	if err != nil {
		t.Fatal(err)
	}
	var tools []*genai.Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || len(tools[0].FunctionDeclarations) != 2 {
		t.Fatalf("tools %s", b)
	}
	for i, m := range generated.ModelTools() {
		d := tools[0].FunctionDeclarations[i]
		if d.Name != m.Name || d.Description != m.DescriptionForModel() || d.Parameters != nil || !jsontest.Equal(t, d.ParametersJsonSchema, m.Parameters) {
			t.Errorf("%s: %+v", m.Name, d)
		}
	}
}

// A genai FunctionCall, as the SDK hands it over, runs through the executor;
// the FunctionResponse reads as genai's, an object with "output" or, for a
// failure, "error" with keel's stable code and nothing internal.
func TestCallsAndResponsesThroughGenaiTypes(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		call   *genai.FunctionCall
		output bool
		code   string
	}{
		{&genai.FunctionCall{ID: "c1", Name: "lookup_incident", Args: map[string]any{"incident_id": "INC-001"}}, true, ""},
		{&genai.FunctionCall{Name: "lookup_incident", Args: map[string]any{"incident_id": "nope"}}, false, "invalid_arguments"},
		{&genai.FunctionCall{ID: "c3", Name: "delete_prod", Args: map[string]any{}}, false, "unknown_tool"},
		{&genai.FunctionCall{ID: "c4", Name: "create_ticket", Args: map[string]any{"incident_id": "INC-001", "summary": "raise pool"}}, false, "approval_required"},
	} {
		raw, err := json.Marshal(c.call)
		if err != nil {
			t.Fatal(err)
		}
		var fc gemini.FunctionCall
		if err := json.Unmarshal(raw, &fc); err != nil {
			t.Fatal(err)
		}
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, gemini.Call(fc, "part-0"))
		out, err := json.Marshal(gemini.Result(r))
		if err != nil {
			t.Fatal(err)
		}
		var resp genai.FunctionResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatal(err)
		}
		wantID := c.call.ID
		if wantID == "" {
			wantID = "part-0"
		}
		if resp.ID != wantID || resp.Name != c.call.Name {
			t.Errorf("%s: response %+v", raw, resp)
		}
		if c.output {
			if o, ok := resp.Response["output"].(map[string]any); !ok || o["incident_id"] != "INC-001" {
				t.Errorf("%s: response %v", raw, resp.Response)
			}
			continue
		}
		e, ok := resp.Response["error"].(map[string]any)
		if !ok || e["code"] != c.code || resp.Response["output"] != nil {
			t.Errorf("%s: response %v, want code %s", raw, resp.Response, c.code)
		}
	}
}

// Through the SDK itself, to a server on loopback: genai's client sends the
// declarations as keel wrote them, and the functionCall it parses from the
// reply runs through the executor; the functionResponse goes back in the
// next request as the SDK serializes it.
func TestRoundTripThroughTheGenaiClient(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"fc-1","name":"lookup_incident","args":{"incident_id":"INC-001"}}}]}}]}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	var tools []*genai.Tool
	b, _ := json.Marshal(geminiTools(t, generated.ModelTools()))
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	contents := []*genai.Content{genai.NewContentFromText("What happened in INC-001?", genai.RoleUser)}
	resp, err := client.Models.GenerateContent(ctx, "gemini-test", contents, &genai.GenerateContentConfig{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := json.Marshal(bodies[0]["tools"])
	var sentTools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(sent, &sentTools); err != nil || len(sentTools) != 1 || len(sentTools[0].FunctionDeclarations) != 2 {
		t.Fatalf("the request's tools: %s (%v)", sent, err)
	}
	for i, m := range generated.ModelTools() {
		if d := sentTools[0].FunctionDeclarations[i]; d.Name != m.Name || !jsontest.Equal(t, d.ParametersJSONSchema, m.Parameters) {
			t.Errorf("sent %s, want keel's schema %s", d.ParametersJSONSchema, m.Parameters)
		}
	}
	calls := resp.FunctionCalls()
	if len(calls) != 1 {
		t.Fatalf("function calls %v", calls)
	}
	raw, _ := json.Marshal(calls[0])
	var fc gemini.FunctionCall
	if err := json.Unmarshal(raw, &fc); err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(gemini.Result(exec.Execute(ctx, runtime.ExecutionContext{}, gemini.Call(fc, "part-0"))))
	var fr genai.FunctionResponse
	if err := json.Unmarshal(answer, &fr); err != nil {
		t.Fatal(err)
	}
	contents = append(contents, resp.Candidates[0].Content, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &fr}}})
	if _, err := client.Models.GenerateContent(ctx, "gemini-test", contents, &genai.GenerateContentConfig{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(bodies[1]["contents"])
	if !strings.Contains(string(back), `"functionResponse":{"id":"fc-1","name":"lookup_incident","response":{"output":{`) || !strings.Contains(string(back), `"incident_id":"INC-001"`) {
		t.Fatalf("the second request's contents: %s", back)
	}
}

// The OpenAPI declarations of the conformance set read as genai's own
// FunctionDeclaration with Parameters (a genai.Schema that writes back the
// same bytes, so nothing in it is outside the SDK's type), the bounds the
// subset has no keyword for in words; and a call that breaks one of those
// bounds is still refused by the executor.
//
// A tool without arguments has no parameters at all (Gemini refuses an
// OBJECT without properties, and genai drops an empty one).
func TestOpenAPIDeclarationsReadAsGenaiSchemas(t *testing.T) {
	tools := append(conformance.ModelTools(), mcpsuite.ModelTools()...)
	decls, err := gemini.Declarations(tools, gemini.Options{OpenAPI: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range tools {
		b, err := json.Marshal(decls[i])
		if err != nil {
			t.Fatal(err)
		}
		var d genai.FunctionDeclaration
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		var params struct{ Properties map[string]json.RawMessage }
		if json.Unmarshal(m.Parameters, &params) == nil && len(params.Properties) == 0 { // most of the suite's tools take no arguments
			if d.Parameters != nil || decls[i].Parameters != nil {
				t.Errorf("a tool without arguments: %s", b)
			}
			continue
		}
		if d.Name != m.Name || d.Parameters == nil || d.ParametersJsonSchema != nil || d.Parameters.Type != genai.TypeObject {
			t.Fatalf("%s: %s", m.Name, b)
		}
		back, err := json.Marshal(d.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		if !jsontest.Equal(t, json.RawMessage(back), decls[i].Parameters) {
			t.Errorf("%s: genai wrote %s back for %s", m.Name, back, decls[i].Parameters)
		}
		if m.Name == "numbers" {
			ratio := d.Parameters.Properties["ratio"]
			if ratio.Type != genai.TypeNumber || !strings.Contains(ratio.Description, "less than 1; more than 0") {
				t.Errorf("ratio: %+v", ratio)
			}
			if !slices.Equal(d.Parameters.PropertyOrdering[:3], []string{"ratio", "amount", "price"}) {
				t.Errorf("property order %v", d.Parameters.PropertyOrdering)
			}
		}
	}
	exec, err := conformance.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, gemini.Call(gemini.FunctionCall{Name: "numbers", Args: json.RawMessage(`{"ratio":1}`)}, "part-0"))
	if r.OK || r.Error.Code != "invalid_arguments" {
		t.Errorf("ratio 1 (exclusiveMaximum 1, said only in words to the model): %+v", r)
	}
}

// A result with content, read by genai's own FunctionResponse: the image,
// the PDF and the CSV (as text/plain) as inline parts; every block
// described under response.content, the others marked omitted.
func TestContentBlocksReadAsGenaiParts(t *testing.T) {
	out, err := json.Marshal(gemini.Result(contenttest.Result()))
	if err != nil {
		t.Fatal(err)
	}
	var resp genai.FunctionResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range resp.Parts {
		parts = append(parts, p.InlineData.MIMEType+" "+p.InlineData.DisplayName+" "+string(p.InlineData.Data[:4]))
	}
	want := "image/png  \x89PNG,application/pdf q3.pdf %PDF,text/plain q3.csv serv"
	if strings.Join(parts, ",") != want {
		t.Fatalf("parts %q\nwant %q", parts, want)
	}
	blocks, _ := resp.Response["content"].([]any)
	if len(blocks) != 6 || resp.Response["output"] == nil {
		t.Fatalf("response %v", resp.Response)
	}
	audio := blocks[1].(map[string]any)
	if audio["type"] != "audio" || !strings.HasPrefix(audio["omitted"].(string), "a Gemini function response has no place") {
		t.Errorf("audio described as %v", audio)
	}
	if img := blocks[0].(map[string]any); img["omitted"] != nil {
		t.Errorf("the image sent as a part is described as omitted: %v", img)
	}
}

// geminiTools is gemini.Tools in the default form.
func geminiTools(t *testing.T, set []runtime.ModelTool) []gemini.Tool {
	t.Helper()
	out, err := gemini.Tools(set, gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
