package ollama_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/contenttest"
	"github.com/keelgen/keel/provider/ollama"
	"github.com/keelgen/keel/runtime"
)

func TestSafeFormKeepsConstraintsInDescriptions(t *testing.T) {
	tools, err := ollama.Tools(generated.ModelTools(), ollama.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tools[1])
	want := `{"type":"function","function":{"name":"lookup_incident","description":"Returns one incident record by its id. Errors it may return: incident_not_found.","parameters":{"properties":{"incident_id":{"type":"string","description":"The id of the incident to look up, such as INC-001. (pattern \"^INC-[0-9]{3,}$\")"}},"type":"object","required":["incident_id"]}}}`
	if string(b) != want {
		t.Fatalf("safe form\n%s\nwant\n%s", b, want)
	}
	lost := ollama.Problems(generated.ModelTools()[1].Parameters)
	if !slices.Equal(lost, []string{"incident_id: pattern"}) {
		t.Fatalf("lost %v", lost)
	}
}

func TestLostKeywords(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
		"a":{"anyOf":[{"type":"string"},{"type":"integer"}]},"b":{"const":"x"},
		"c":{"type":"object","properties":{"d":{"type":"string"}}},"e":{"type":"array","items":{"type":"string","minLength":2}}}}`)
	got := ollama.Problems(schema)
	want := []string{"a: anyOf", "b: const", "c: properties", "e[]: minLength"}
	if !slices.Equal(got, want) {
		t.Fatalf("lost %v, want %v", got, want)
	}
}

// Calls arrive in /api/chat's response shape, arguments as an object.
func TestCallsAndResults(t *testing.T) {
	var msg struct {
		Message struct {
			ToolCalls []ollama.ToolCall `json:"tool_calls"`
		} `json:"message"`
	}
	resp := `{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[
		{"function":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}},
		{"id":"call_x","function":{"index":1,"name":"create_ticket","arguments":{"incident_id":"INC-001","summary":"s"}}}]},"done":true}`
	if err := json.Unmarshal([]byte(resp), &msg); err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range msg.Message.ToolCalls {
		call := ollama.Call(c, "ollama-"+string(rune('0'+i)))
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
		m := ollama.Result(r)
		if m.Role != "tool" || m.ToolName != call.Name || (!r.OK && !strings.Contains(m.Content, `"code":"`+string(r.Code())+`"`)) {
			t.Errorf("message %+v", m)
		}
		got = append(got, call.ID+"="+string(r.Code()))
	}
	if strings.Join(got, ",") != "ollama-0=,call_x=approval_required" {
		t.Fatalf("results %v", got)
	}
}

// A result with content: the PNG in images (base64, as Ollama's
// api.Message reads it), every other block described and marked omitted.
func TestContentBlocks(t *testing.T) {
	b, err := json.Marshal(ollama.Result(contenttest.Result()))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Role, Content string
		Images        []string
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "tool" || len(m.Images) != 1 || m.Images[0] != base64.StdEncoding.EncodeToString(contenttest.PNG) {
		t.Fatalf("message %s", b)
	}
	if strings.Count(m.Content, `"omitted":"an Ollama tool message carries text and PNG or JPEG images only"`) != 5 || strings.Contains(m.Content, "keel-pixels") {
		t.Errorf("content %s", m.Content)
	}
}
